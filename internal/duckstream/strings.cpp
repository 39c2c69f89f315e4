// A C++ exception must not unwind through Go frames: the runtime cannot
// unwind them, so the C++ runtime calls std::terminate and the whole process
// aborts. DuckDB's C API throws from duckdb_vector_assign_string_element_len
// when the string heap cannot grow (the database is at its memory_limit);
// called from a Go table function's callback, that exception would cross the
// callback's Go frames. This wrapper catches it on the C++ side and hands its
// message back instead.
#include <cstdint>
#include <cstring>
#include <exception>

extern "C" {

struct _duckdb_vector;
void duckdb_vector_assign_string_element_len(struct _duckdb_vector *vector, uint64_t index, const char *str, uint64_t str_len);

int meterstore_assign_string(void *vector, uint64_t index, const char *str, uint64_t len, char *err, size_t errlen) {
	try {
		duckdb_vector_assign_string_element_len(static_cast<struct _duckdb_vector *>(vector), index, str, len);
		return 0;
	} catch (const std::exception &e) {
		std::strncpy(err, e.what(), errlen - 1);
		err[errlen - 1] = '\0';
	} catch (...) {
		std::strncpy(err, "unknown exception", errlen - 1);
		err[errlen - 1] = '\0';
	}
	return 1;
}

}
