package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// runSuite runs one suite's programs with the deployment's environment.
func runSuite(ctx context.Context, suite string, opt options, env []string) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	var cmd *exec.Cmd
	switch suite {
	case "python":
		py := opt.python
		if !filepath.IsAbs(py) {
			py = filepath.Join(root, py)
		}
		if _, err := os.Stat(py); err != nil {
			return fmt.Errorf("no virtualenv at %s: run `go tool task interop:setup` first", py)
		}
		args := append([]string{"-m", "pytest", "-v", "-p", "no:cacheprovider", "--durations=15", "-rs", filepath.Join(root, "interop", "python")}, opt.pytestArgs...)
		cmd = exec.CommandContext(ctx, py, args...)
	case "java":
		cmd = exec.CommandContext(ctx, "mvn", "-q", "-B", "-f", filepath.Join(root, "interop", "java", "pom.xml"), "test")
	}
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}
