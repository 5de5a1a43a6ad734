package commands

import "net/http"

// failure is a command's failure that knows how the API answers it: the
// HTTP layer classifies errors by these methods (http/envelope), anywhere
// in an error's chain, so that it needs to know nothing of this package.
type failure struct {
	text string
	// status is the answer's HTTP status.
	status int
	// public is what the client reads.
	public string
}

func (f *failure) Error() string { return f.text }

// Status is the answer's HTTP status.
func (f *failure) Status() int { return f.status }

// Code is empty: the route group's dialect names the code of the status.
func (f *failure) Code() string { return "" }

// Message is what the client reads, which says what to do next.
func (f *failure) Message() string { return f.public }

var (
	// ErrBusy: a command lost the race for its stream maxAttempts times and
	// stored nothing; repeating it later is safe.
	ErrBusy error = &failure{
		text: "too many concurrent changes", status: http.StatusServiceUnavailable,
		public: "the resource is being changed by many requests at once; nothing was changed, retry shortly",
	}

	// ErrLagging: a write was stored but the read models did not reflect
	// it in time. The change is kept and will appear; repeating the
	// request repeats the change unless it runs in the same
	// idempotency.Scope (an Idempotency-Key), which finds the stored
	// events instead.
	ErrLagging error = &failure{
		text: "read models are lagging behind the write", status: http.StatusServiceUnavailable,
		public: "the change was saved but is not visible yet; it will appear shortly. Repeat the request only with the same Idempotency-Key, which answers it once visible: without one the change is made again",
	}
)
