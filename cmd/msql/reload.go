package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"

	"github.com/meterstore/meterstore/settings"
)

// configFile is the configuration file a deployment was opened from and the
// digest of what it held then, so a long-running command can apply it again
// once it changes: another process may have added a column with it (msql
// create-tables), and a declaration older than the table halts archival.
type configFile struct {
	path string
	sum  [sha256.Size]byte
}

// read returns the file's settings and digest.
func (c configFile) read() (settings.Settings, [sha256.Size]byte, error) {
	b, err := os.ReadFile(c.path)
	if err != nil {
		return settings.Settings{}, [sha256.Size]byte{}, fmt.Errorf("read configuration: %w", err)
	}
	s, err := settings.ParseSettings(string(b), os.LookupEnv)
	if err != nil {
		return settings.Settings{}, [sha256.Size]byte{}, fmt.Errorf("%s: %w", c.path, err)
	}
	return s, sha256.Sum256(b), nil
}

// reloadTables applies the configuration file's table declarations to the
// running store when the file changed since it was last applied, or always
// with force (SIGHUP): each table whose declaration changed is evolved
// (store.Redeclare). It returns the tables evolved. Users, addresses and the
// other settings take effect at the next start.
func (d *deployment) reloadTables(ctx context.Context, force bool) ([]string, error) {
	if d.config.path == "" {
		return nil, nil
	}
	s, sum, err := d.config.read()
	if err != nil || (sum == d.config.sum && !force) {
		return nil, err
	}
	evolved, err := d.store.Redeclare(ctx, declaredTables(s))
	d.config.sum = sum
	return evolved, err
}
