// A C++ exception must not unwind through Go frames: the runtime cannot
// unwind them, so the C++ runtime calls std::terminate and the whole process
// aborts. DuckDB's C API throws from duckdb_vector_assign_string_element_len
// when the string heap cannot grow (the database is at its memory_limit);
// called from a Go table function's callback, that exception would cross the
// callback's Go frames. This wrapper catches it on the C++ side and hands its
// message back instead, in memory the caller frees: the success path, once
// per string written, allocates nothing on either side.
#include <cstdint>
#include <cstring>
#include <exception>

extern "C" {

struct _duckdb_vector;
void duckdb_vector_assign_string_element_len(struct _duckdb_vector *vector, uint64_t index, const char *str, uint64_t str_len);

struct meterstore_assign_result {
	int failed;
	char *message; // malloc'd, NULL when none could be had
};

// meterstore_assign_strings writes n strings into vector, the i-th into row
// rows[i]: bytes[ends[i-1], ends[i]) (from 0 for the first) — a column's
// strings of one chunk in one call.
struct meterstore_assign_result meterstore_assign_strings(void *vector, uint64_t n, const uint64_t *rows, const char *bytes, const uint64_t *ends) {
	try {
		uint64_t start = 0;
		for (uint64_t i = 0; i < n; i++) {
			duckdb_vector_assign_string_element_len(static_cast<struct _duckdb_vector *>(vector), rows[i], bytes + start, ends[i] - start);
			start = ends[i];
		}
		return {0, nullptr};
	} catch (const std::exception &e) {
		return {1, strdup(e.what())};
	} catch (...) {
		return {1, nullptr};
	}
}

}
