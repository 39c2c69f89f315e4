package ingest

import "testing"

// SetHistoryPaging streams every Parquet file of history whatever its size,
// sets the rows of a page of the streamed history path and a hook told the
// rows held as each page is handed over, until t ends.
func SetHistoryPaging(t testing.TB, rows int, held func(rows int)) {
	prevMin, prevRows, prevHook := streamMinRows, historyPageRows, onHistoryPage
	streamMinRows, historyPageRows, onHistoryPage = 0, rows, held
	t.Cleanup(func() { streamMinRows, historyPageRows, onHistoryPage = prevMin, prevRows, prevHook })
}

// SetEarlyWriteHook sets a hook told the rows read so far each time a write
// begins while a file is still being read, until t ends.
func SetEarlyWriteHook(t testing.TB, hook func(rowsRead int)) {
	prev := onEarlyWrite
	onEarlyWrite = hook
	t.Cleanup(func() { onEarlyWrite = prev })
}
