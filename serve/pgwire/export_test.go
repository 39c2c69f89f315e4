package pgwire

// SetSpool sets how many bytes of a result srv holds back in memory and in
// all before it sends them (0: the defaults).
func SetSpool(srv *Server, memory int, limit int64) { srv.spoolMemory, srv.spoolLimit = memory, limit }
