// Package settings reads a deployment's TOML configuration — the hot
// PostgreSQL, the cold warehouse (and how an s3:// one is reached), the
// engine's options, the tables and the server's users — into the validated
// types the storage contract (package meterstore) defines. A file and a
// program that builds its TableSpecs by hand pass through the same checks;
// unknown keys and unset ${VAR}s are errors, never ignored.
package settings
