package feedsvc

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Error is any error answer of the API, whatever its status or dialect:
// Code is its code (`code` of the flat 401, `error.code` of every other
// body; docs/errors.md lists every code, what it means and whether to
// retry), Message its text.
type Error struct {
	Status  int
	Code    string
	Message string
	// Body is the whole body as the document's ApiError union: its As*
	// methods give the typed one (NewsNotFoundError with its resource and
	// id, and so on).
	Body ApiError
}

func (e *Error) Error() string {
	return fmt.Sprintf("feedsvc: %d %s: %s", e.Status, e.Code, e.Message)
}

// Check is nil for a 2xx answer, and an *Error for any other (or an error
// saying the body was not an error body of the API).
func Check(resp *http.Response, body []byte) error {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	e := &Error{Status: resp.StatusCode}
	if err := json.Unmarshal(body, &e.Body); err != nil {
		return fmt.Errorf("feedsvc: %d answer with a body that is not JSON: %w", resp.StatusCode, err)
	}
	var flat struct {
		Code  string          `json:"code"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &flat); err != nil {
		return fmt.Errorf("feedsvc: %d answer with a body that is not an error: %s", resp.StatusCode, body)
	}
	var nested struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	switch {
	case flat.Code != "": // the 401: `error` is the text
		e.Code = flat.Code
		_ = json.Unmarshal(flat.Error, &e.Message)
	case json.Unmarshal(flat.Error, &nested) == nil && nested.Code != "":
		e.Code, e.Message = nested.Code, nested.Message
	default:
		return fmt.Errorf("feedsvc: %d answer without an error code: %s", resp.StatusCode, body)
	}
	return e
}
