package access

import (
	"strconv"

	"github.com/meterstore/meterstore/internal/sqltext"
)

// ParamCount is the highest $n in the statement's code, or the number of ?
// placeholders if higher.
func ParamCount(q string) int {
	n, marks := 0, 0
	for _, s := range sqltext.Lex(q) {
		if !s.Code {
			continue
		}
		t := s.Text
		for i := 0; i < len(t); i++ {
			if t[i] == '?' {
				marks++ // JDBC's and ADBC's positional placeholder, which DuckDB takes
				continue
			}
			if t[i] != '$' {
				continue
			}
			j := i + 1
			for j < len(t) && t[j] >= '0' && t[j] <= '9' {
				j++
			}
			if j > i+1 {
				if v, err := strconv.Atoi(t[i+1 : j]); err == nil && v > n {
					n = v
				}
			}
			i = j - 1
		}
	}
	return max(n, marks)
}
