package main

import (
	"regexp"
	"strings"
)

// stageWords are the words our code and the DuckDB driver put before a
// message to say where it failed ("run: ", "database/sql/driver: API error: "):
// they help a developer read a log, not a user read an error.
var stageWords = regexp.MustCompile(`(^|: )(?:run|database/sql/driver(?:: API error)?): `)

// userMessage is err's message as the shell prints it: without stage words.
func userMessage(err error) string {
	msg := err.Error()
	for {
		next := stageWords.ReplaceAllString(msg, "$1")
		if next == msg {
			return strings.TrimSpace(msg)
		}
		msg = next
	}
}
