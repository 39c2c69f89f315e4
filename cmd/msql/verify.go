package main

// verifyFailed is returned when the tiering invariant does not hold; msql
// exits with status 3 so a monitoring job can tell it from a failure to check.
type verifyFailed struct{ report string }

func (v *verifyFailed) Error() string { return v.report }
