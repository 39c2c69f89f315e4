package plan

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
)

// readable is a rendered statement as a golden shows it: the typed projection
// and read_parquet's field-id schema, which the planner repeats for every file
// list it reads, folded into $COLUMNS(table) and $SCHEMA(table) — only where
// they are exactly what the `projection` command prints, so a change to
// either shows once there and unfolded everywhere it differs — file lists
// longer than three counted, and every subquery on lines of its own, indented
// by depth, so a change to one relation is a change to its lines.
func (g *golden) readable(sql string) string {
	if g.dir != "" {
		sql = strings.ReplaceAll(sql, g.dir, "$WAREHOUSE")
	}
	for _, cfg := range g.tables {
		sql = strings.ReplaceAll(sql, typedProjection(cfg), "$COLUMNS("+cfg.Name()+")")
		sql = strings.ReplaceAll(sql, fieldIDSchema(cfg), "$SCHEMA("+cfg.Name()+")")
	}
	sql = fileList.ReplaceAllStringFunc(sql, countFiles)
	return indentSubqueries(sql)
}

// fileList is a DuckDB list of quoted warehouse paths.
var fileList = regexp.MustCompile(`\['\$WAREHOUSE/[^']*'(?:, '\$WAREHOUSE/[^']*')*\]`)

func countFiles(list string) string {
	files := strings.Split(strings.Trim(list, "[]"), ", ")
	if len(files) <= 3 {
		return list
	}
	return fmt.Sprintf("[%d files: %s, %s, …, %s]", len(files), files[0], files[1], files[len(files)-1])
}

// indentSubqueries starts each "(SELECT" on a new line one level deeper and
// puts its closing parenthesis, and every UNION ALL or JOIN between
// relations, on a line of its own at its level. Quoted text is copied as it
// is; lines the planner already broke keep their own indentation.
func indentSubqueries(sql string) string {
	var b strings.Builder
	var subquery []bool // per open parenthesis: does it hold a SELECT?
	depth := 0
	newline := func() { b.WriteString("\n" + strings.Repeat("  ", depth)) }
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case c == '\'' || c == '"':
			j := closingQuote(sql, i)
			b.WriteString(sql[i:j])
			i = j - 1
		case c == '(':
			sub := strings.HasPrefix(sql[i+1:], "SELECT ")
			subquery = append(subquery, sub)
			b.WriteByte(c)
			if sub {
				depth++
				newline()
			}
		case c == ')' && len(subquery) > 0:
			if subquery[len(subquery)-1] {
				depth--
				newline()
			}
			subquery = subquery[:len(subquery)-1]
			b.WriteByte(c)
		case c == ' ' && joinKeyword(sql[i+1:]) != "":
			kw := joinKeyword(sql[i+1:])
			newline()
			b.WriteString(kw)
			i += len(kw)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// closingQuote is the index just past the quoted text starting at i, a
// doubled quote being part of it.
func closingQuote(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		if s[j] == q {
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}

// joinKeyword is the keyword joining two relations that s starts with, or "".
func joinKeyword(s string) string {
	for _, kw := range []string{"UNION ALL", "ANTI JOIN", "SEMI JOIN", "LEFT JOIN", "POSITIONAL JOIN", "JOIN"} {
		if strings.HasPrefix(s, kw+" ") || strings.HasPrefix(s, kw+"(") {
			return kw
		}
	}
	return ""
}

// projection prints, one column per line, what $COLUMNS(table) and
// $SCHEMA(table) stand for in the goldens.
func (g *golden) projection(t *testing.T, c ddCase) string {
	for _, cfg := range g.tables {
		if cfg.Name() != c.arg("table") {
			continue
		}
		var lines []string
		lines = append(lines, "$COLUMNS("+cfg.Name()+"):")
		for _, col := range cfg.Columns() {
			lines = append(lines, "  "+typedColumn(col))
		}
		lines = append(lines, "$SCHEMA("+cfg.Name()+"): MAP {")
		for _, col := range cfg.Columns() {
			lines = append(lines, fmt.Sprintf("  %d: %s %s", col.FieldID, meterstore.QuoteIdent(col.Name), col.Type.DuckDBType()))
		}
		return strings.Join(append(lines, "}"), "\n")
	}
	require.Failf(t, "no table", "line %d: no table %s", c.line, c.arg("table"))
	return ""
}

func TestReadableGoldenFolding(t *testing.T) {
	cfg := meterstore.TableSpec{Name: "readings_versions"}.MustBuild()
	g := &golden{tables: []meterstore.TableConfig{cfg}}
	files := "['$WAREHOUSE/a.parquet', '$WAREHOUSE/b.parquet', '$WAREHOUSE/c.parquet', '$WAREHOUSE/d.parquet']"
	in := "SELECT * FROM (SELECT " + typedProjection(cfg) + " FROM read_parquet(" + files + ", schema = " + fieldIDSchema(cfg) +
		") WHERE x = ')(SELECT ') AS r UNION ALL (SELECT 1)"
	require.Equal(t, `SELECT * FROM (
  SELECT $COLUMNS(readings_versions) FROM read_parquet([4 files: '$WAREHOUSE/a.parquet', '$WAREHOUSE/b.parquet', …, '$WAREHOUSE/d.parquet'], schema = $SCHEMA(readings_versions)) WHERE x = ')(SELECT '
) AS r
UNION ALL (
  SELECT 1
)`, g.readable(in))
}
