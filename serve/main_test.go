package serve_test

import (
	"testing"

	"github.com/meterstore/meterstore/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
