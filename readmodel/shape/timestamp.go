package shape

import "time"

// Timestamp is the API's time format: UTC, millisecond precision (D2).
func Timestamp(t time.Time) string { return string(appendTimestamp(nil, t)) }

const timestampLayout = "2006-01-02T15:04:05.000Z"

// appendTimestamp is t.UTC().AppendFormat(b, timestampLayout) without the
// layout parsing, which a page of items pays for hundreds of times.
func appendTimestamp(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, timestampLayout)
	}
	hour, minute, second := t.Clock()
	b = appendDigits(b, year, 4)
	b = appendDigits(append(b, '-'), int(month), 2)
	b = appendDigits(append(b, '-'), day, 2)
	b = appendDigits(append(b, 'T'), hour, 2)
	b = appendDigits(append(b, ':'), minute, 2)
	b = appendDigits(append(b, ':'), second, 2)
	b = appendDigits(append(b, '.'), t.Nanosecond()/int(time.Millisecond), 3)
	return append(b, 'Z')
}

// appendDigits writes n (not negative) in exactly width decimal digits.
func appendDigits(b []byte, n, width int) []byte {
	for i := width - 1; i >= 0; i-- {
		b = append(b, 0)
	}
	for i := len(b) - 1; i >= len(b)-width; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return b
}
