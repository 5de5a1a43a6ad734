package projections

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/uptrace/bun"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/eventstore"
)

// RunnerConfig tunes every projector's subscriber.
type RunnerConfig struct {
	BatchSize    int
	PollInterval time.Duration
	// CheckpointSuffix names checkpoints apart from the live ones (the
	// rebuild uses it to build a shadow copy).
	CheckpointSuffix string
}

// Runner runs projectors as handlers of one Watermill router.
type Runner struct {
	router      *message.Router
	projectors  []Projector
	subscribers []*Subscriber
	progress    map[string]*Progress
}

// NewRunner wires each projector to its own subscriber and handler.
func NewRunner(store eventstore.Store, db *bun.DB, logger *slog.Logger, cfg RunnerConfig, projectors ...Projector) (*Runner, error) {
	router, err := message.NewRouter(message.RouterConfig{CloseTimeout: 30 * time.Second}, watermill.NewSlogLoggerWithLevelMapping(
		logger, map[slog.Level]slog.Level{slog.LevelInfo: slog.LevelDebug},
	))
	if err != nil {
		return nil, fmt.Errorf("create projection router: %w", err)
	}
	r := &Runner{router: router, projectors: projectors, progress: map[string]*Progress{}}
	for _, p := range projectors {
		prog := newProgress()
		sub := NewSubscriber(store, db, SubscriberConfig{
			Checkpoint: p.Name() + cfg.CheckpointSuffix, Version: p.Version(), EventTypes: EventTypes(p),
			BatchSize: cfg.BatchSize, PollInterval: cfg.PollInterval,
		}, prog, logger)
		router.AddConsumerHandler(p.Name(), p.Name(), sub, handlerFor(p))
		r.subscribers = append(r.subscribers, sub)
		r.progress[p.Name()] = prog
	}
	return r, nil
}

// Run projects until ctx ends or Close is called.
func (r *Runner) Run(ctx context.Context) error {
	if err := r.router.Run(ctx); err != nil {
		return fmt.Errorf("run projections: %w", err)
	}
	return nil
}

// Running is closed once every handler is subscribed.
func (r *Runner) Running() chan struct{} { return r.router.Running() }

// Close stops the router; unfinished batches roll back.
func (r *Runner) Close() error { return r.router.Close() }

// Progress returns a projector's progress, nil when it is not run here.
func (r *Runner) Progress(name string) *Progress { return r.progress[name] }

// Projectors are the projectors this runner runs.
func (r *Runner) Projectors() []Projector { return r.projectors }

func handlerFor(p Projector) message.NoPublishHandlerFunc {
	handlers := dispatcherFor(p)
	return func(msg *message.Message) error {
		tx, ok := TxFromContext(msg.Context())
		if !ok {
			return errors.New("message carries no batch transaction")
		}
		env, err := envelopeOf(msg)
		if err != nil {
			return err
		}
		if err := handlers.project(msg.Context(), tx, env); err != nil {
			return fmt.Errorf("%s: project %s %s: %w", p.Name(), env.Event.EventType(), env.EventID, err)
		}
		return nil
	}
}

func envelopeOf(msg *message.Message) (Envelope, error) {
	e, err := domain.DecodeEvent(msg.Metadata.Get(metaType), msg.Payload)
	if err != nil {
		return Envelope{}, err
	}
	rev, _ := strconv.ParseUint(msg.Metadata.Get(metaRevision), 10, 64)
	commit, _ := strconv.ParseUint(msg.Metadata.Get(metaCommit), 10, 64)
	prepare, _ := strconv.ParseUint(msg.Metadata.Get(metaPrepare), 10, 64)
	at, _ := time.Parse(time.RFC3339Nano, msg.Metadata.Get(metaRecordedAt))
	return Envelope{
		Event: e, EventID: msg.UUID, StreamID: msg.Metadata.Get(metaStream), Revision: rev,
		Position: eventstore.Position{Commit: commit, Prepare: prepare}, RecordedAt: at,
	}, nil
}
