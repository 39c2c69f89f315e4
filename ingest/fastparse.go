package ingest

import "time"

// quickInstant reads the common spellings of an instant with an offset —
// YYYY-MM-DD, T or a space, hh:mm:ss, an optional fraction, then Z, ±hh,
// ±hhmm or ±hh:mm — without time.Parse's trial of every layout. ok is false
// for anything else, which parseInstant then reads (or refuses) the slow way.
func quickInstant(s string) (t time.Time, ok bool) {
	if len(s) < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	sec, ok6 := digits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 ||
		day > daysIn(time.Month(month), year) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	rest := s[19:]
	nsec := 0
	if rest != "" && rest[0] == '.' {
		i := 1
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 1 || i > 10 {
			return time.Time{}, false
		}
		frac, _ := digits(rest[1:i])
		for n := i - 1; n < 9; n++ {
			frac *= 10
		}
		nsec, rest = frac, rest[i:]
	}
	offset := 0
	switch {
	case rest == "Z":
	case len(rest) == 3 || len(rest) == 5 || len(rest) == 6 && rest[3] == ':':
		if rest[0] != '+' && rest[0] != '-' {
			return time.Time{}, false
		}
		oh, okh := digits(rest[1:3])
		om, okm := 0, true
		switch len(rest) {
		case 5:
			om, okm = digits(rest[3:5])
		case 6:
			om, okm = digits(rest[4:6])
		}
		if !okh || !okm || oh > 23 || om > 59 {
			return time.Time{}, false
		}
		offset = (oh*60 + om) * 60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return time.Time{}, false
	}
	t = time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	return t.Add(-time.Duration(offset) * time.Second), true
}

// digits reads s as a non-negative decimal number of ASCII digits only.
func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, len(s) > 0
}

func daysIn(m time.Month, year int) int {
	return time.Date(year, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// isPlainDecimal reports whether s is an optional sign, digits, and an
// optional decimal point followed by digits: ^[+-]?[0-9]+(\.[0-9]+)?$.
func isPlainDecimal(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return false
	}
	if i == len(s) {
		return true
	}
	if s[i] != '.' || i+1 == len(s) {
		return false
	}
	for _, c := range []byte(s[i+1:]) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
