package settings

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
)

func TestS3SettingsParsedAndSecretsNeverPrinted(t *testing.T) {
	s, err := ParseSettings(`
[cold]
warehouse = "s3://meters/warehouse"
[cold.s3]
endpoint = "http://127.0.0.1:8333"
region = "eu-central-1"
access_key_id = "AKIDEXAMPLE"
secret_access_key = "${SECRET}"
request_timeout = "30s"
`, func(k string) (string, bool) { return "wJalrXUtnFEMI-very-secret", k == "SECRET" })
	require.NoError(t, err)
	s3 := s.Cold.S3
	require.Equal(t, "http://127.0.0.1:8333", s3.Endpoint)
	require.Equal(t, "wJalrXUtnFEMI-very-secret", s3.SecretAccessKey.Reveal())
	require.Equal(t, 30*time.Second, s3.RequestTimeout)
	require.True(t, s3.UsesPathStyle(), "an endpoint means path style unless told otherwise")

	var logged strings.Builder
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("settings", "cold", s.Cold, "secret", s3.SecretAccessKey)
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%+v", s), fmt.Sprintf("%#v", s), logged.String()} {
		require.NotContains(t, out, "very-secret")
	}
	require.Contains(t, fmt.Sprintf("%+v", s.Cold), "[redacted]")
}

func TestS3SettingsRefused(t *testing.T) {
	for src, setting := range map[string]string{
		`endpoint = "127.0.0.1:8333"`:                  "cold.s3.endpoint",
		`endpoint = "http://host:1/bucket"`:            "cold.s3.endpoint",
		`access_key_id = "AKID"`:                       "cold.s3.access_key_id, cold.s3.secret_access_key",
		`secret_access_key = "only-the-secret-of-two"`: "cold.s3.access_key_id, cold.s3.secret_access_key",
	} {
		_, err := ParseSettings("[cold]\nwarehouse = \"s3://b/w\"\n[cold.s3]\n"+src+"\n", func(string) (string, bool) { return "", false })
		var ce *meterstore.ConfigError
		require.ErrorAs(t, err, &ce, src)
		require.Equal(t, setting, ce.Setting, src)
		require.NotContains(t, err.Error(), "only-the-secret-of-two")
	}
}
