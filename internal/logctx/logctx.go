// Package logctx carries a request's id in its context and adds it to
// every log line written with that context, so one request's lines can be
// found together whichever package writes them.
package logctx

import (
	"context"
	"log/slog"
)

type requestIDKey struct{}

// WithRequestID returns ctx carrying the request id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID is the request id ctx carries, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// Handler adds request_id to records logged with a context that carries
// one (the *Context logging calls).
type Handler struct{ slog.Handler }

// NewHandler wraps h; wrapping a Handler again returns it unchanged, so a
// line never names its request twice.
func NewHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(Handler); ok {
		return h
	}
	return Handler{h}
}

// New is a logger over h that names each record's request.
func New(h slog.Handler) *slog.Logger { return slog.New(NewHandler(h)) }

func (h Handler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return Handler{h.Handler.WithAttrs(attrs)}
}

func (h Handler) WithGroup(name string) slog.Handler {
	return Handler{h.Handler.WithGroup(name)}
}
