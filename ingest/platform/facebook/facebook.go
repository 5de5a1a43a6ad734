// Package facebook reads Facebook pages through the Graph API: the page
// (/{page}), its posts (/{page}/posts) and its upcoming events
// (/{page}/events), with a Page access token, or an app's token with the
// Page Public Content Access feature for other public pages. Groups and
// personal profiles give no access to their content through the API, so
// they are not found.
package facebook

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/feedsvc/feedsvc/domain"
	"github.com/feedsvc/feedsvc/ingest/platform"
	"github.com/feedsvc/feedsvc/ingest/platform/graph"
)

// API is the Graph API for pages.
type API struct{ graph *graph.API }

// New returns the pages API of a Graph API.
func New(g *graph.API) *API { return &API{graph: g} }

const (
	pageFields  = "id,name,username,link,picture{url}"
	postFields  = "id,message,created_time,permalink_url,full_picture,attachments{media_type,type,url}"
	eventFields = "id,name,description,start_time,end_time,timezone,place,is_canceled,is_online,ticket_uri,cover,updated_time"
	pageSize    = "100"
)

type page struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Username string `json:"username"`
	Picture  struct {
		Data struct {
			URL string `json:"url"`
		} `json:"data"`
	} `json:"picture"`
}

// Lookup implements platform.Platform: GET /{page}. Only pages can be
// read; a group or a profile is not found, saying so.
func (a *API) Lookup(ctx context.Context, ref platform.Ref) (platform.Account, error) {
	if ref.Kind != "page" {
		return platform.Account{}, &platform.NotFound{Reason: fmt.Sprintf(
			"Facebook %ss cannot be accessed: the Graph API gives no access to their content, only to pages'", ref.Kind)}
	}
	var p page
	err := a.graph.Get(ctx, "/"+url.PathEscape(ref.Handle), url.Values{"fields": {pageFields}}, &p)
	var ge *graph.Error
	// Code 100 without subcode 33 is a node that is not a page (a
	// person's id): it has no page fields.
	if errors.Is(err, platform.ErrNotFound) || errors.As(err, &ge) && ge.Code == 100 {
		return platform.Account{}, &platform.NotFound{Reason: "no Facebook page this token can read has this identifier"}
	}
	if err != nil {
		return platform.Account{}, err
	}
	return platform.Account{ID: p.ID, Username: p.Username, Name: p.Name, AvatarURL: p.Picture.Data.URL, Kind: "page"}, nil
}

// Cursors of Posts: a page's posts come first, then its upcoming events.
const (
	postsCursor  = "posts:"
	eventsCursor = "events:"
)

// Posts implements platform.Platform: the page's posts since since
// (/{page}/posts), newest first, then its upcoming events
// (/{page}/events, time_filter=upcoming), each paged by its after cursor.
func (a *API) Posts(ctx context.Context, acct platform.Account, since time.Time, cursor string) (platform.Page, error) {
	if rest, ok := strings.CutPrefix(cursor, eventsCursor); ok {
		return a.events(ctx, acct, rest)
	}
	return a.posts(ctx, acct, since, strings.TrimPrefix(cursor, postsCursor))
}

type post struct {
	ID           string `json:"id"`
	Message      string `json:"message"`
	CreatedTime  string `json:"created_time"`
	PermalinkURL string `json:"permalink_url"`
	FullPicture  string `json:"full_picture"`
	Attachments  struct {
		Data []struct {
			MediaType string `json:"media_type"`
			Type      string `json:"type"`
		} `json:"data"`
	} `json:"attachments"`
}

func (a *API) posts(ctx context.Context, acct platform.Account, since time.Time, after string) (platform.Page, error) {
	q := url.Values{"fields": {postFields}, "limit": {pageSize}}
	if !since.IsZero() {
		q.Set("since", strconv.FormatInt(since.Unix(), 10))
	}
	if after != "" {
		q.Set("after", after)
	}
	var out struct {
		Data   []post       `json:"data"`
		Paging graph.Paging `json:"paging"`
	}
	if err := a.graph.Get(ctx, "/"+url.PathEscape(acct.ID)+"/posts", q, &out); err != nil {
		return platform.Page{}, err
	}
	var pg platform.Page
	for _, p := range out.Data {
		published, err := graph.Time(p.CreatedTime)
		if err != nil {
			return platform.Page{}, fmt.Errorf("facebook post %s: created_time %q: %w", p.ID, p.CreatedTime, err)
		}
		pg.Posts = append(pg.Posts, platform.Post{
			Platform: domain.SourceFacebook, ID: p.ID, Subtype: postSubtype(p),
			URL: cmp.Or(p.PermalinkURL, PostURL(p.ID)), Text: p.Message,
			MediaURL: p.FullPicture, ImageURL: p.FullPicture, PublishedAt: published, Account: acct,
		})
	}
	pg.Next = eventsCursor
	if next := out.Paging.NextCursor(); next != "" {
		pg.Next = postsCursor + next
	}
	return pg, nil
}

// postSubtype is what the post's first attachment is.
func postSubtype(p post) string {
	if len(p.Attachments.Data) == 0 {
		return "post"
	}
	at := p.Attachments.Data[0]
	for _, t := range []string{at.MediaType, at.Type} {
		switch {
		case t == "photo" || t == "album" || t == "profile_media" || t == "cover_photo":
			return "photo"
		case strings.HasPrefix(t, "video"):
			return "video"
		case t == "link" || t == "share":
			return "link"
		case t == "event":
			return "event"
		}
	}
	return "post"
}

type event struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	StartTime   string `json:"start_time"`
	EndTime     string `json:"end_time"`
	Timezone    string `json:"timezone"`
	Place       *struct {
		Name     string `json:"name"`
		Location *struct {
			Street    string   `json:"street"`
			City      string   `json:"city"`
			Zip       string   `json:"zip"`
			State     string   `json:"state"`
			Country   string   `json:"country"`
			Latitude  *float64 `json:"latitude"`
			Longitude *float64 `json:"longitude"`
		} `json:"location"`
	} `json:"place"`
	IsCanceled  bool   `json:"is_canceled"`
	IsOnline    bool   `json:"is_online"`
	TicketURI   string `json:"ticket_uri"`
	UpdatedTime string `json:"updated_time"`
	Cover       *struct {
		Source string `json:"source"`
	} `json:"cover"`
}

func (a *API) events(ctx context.Context, acct platform.Account, after string) (platform.Page, error) {
	q := url.Values{"fields": {eventFields}, "time_filter": {"upcoming"}, "limit": {pageSize}}
	if after != "" {
		q.Set("after", after)
	}
	var out struct {
		Data   []event      `json:"data"`
		Paging graph.Paging `json:"paging"`
	}
	if err := a.graph.Get(ctx, "/"+url.PathEscape(acct.ID)+"/events", q, &out); err != nil {
		return platform.Page{}, err
	}
	var pg platform.Page
	for _, e := range out.Data {
		p, err := eventPost(e, acct)
		if err != nil {
			return platform.Page{}, err
		}
		pg.Posts = append(pg.Posts, p)
	}
	if next := out.Paging.NextCursor(); next != "" {
		pg.Next = eventsCursor + next
	}
	return pg, nil
}

func eventPost(e event, acct platform.Account) (platform.Post, error) {
	start, err := graph.Time(e.StartTime)
	if err != nil {
		return platform.Post{}, fmt.Errorf("facebook event %s: start_time %q: %w", e.ID, e.StartTime, err)
	}
	ev := &platform.Happening{Start: start, Timezone: e.Timezone, Cancelled: e.IsCanceled, Online: e.IsOnline, TicketURL: e.TicketURI}
	if e.EndTime != "" {
		if ev.End, err = graph.Time(e.EndTime); err != nil {
			return platform.Post{}, fmt.Errorf("facebook event %s: end_time %q: %w", e.ID, e.EndTime, err)
		}
	}
	if updated, err := graph.Time(e.UpdatedTime); err == nil {
		ev.UpdatedAt = updated
	}
	if e.Place != nil {
		ev.Place = &platform.Place{Name: e.Place.Name}
		if l := e.Place.Location; l != nil {
			ev.Place.Street, ev.Place.City, ev.Place.PostalCode, ev.Place.Region, ev.Place.Country = l.Street, l.City, l.Zip, l.State, l.Country
			ev.Place.Lat, ev.Place.Lng = l.Latitude, l.Longitude
		}
	}
	p := platform.Post{
		Platform: domain.SourceFacebook, ID: e.ID, Subtype: "event", URL: EventURL(e.ID),
		Title: e.Name, Text: e.Description, PublishedAt: ev.UpdatedAt, Account: acct, Event: ev,
	}
	if e.Cover != nil {
		p.MediaURL, p.ImageURL = e.Cover.Source, e.Cover.Source
	}
	return p, nil
}

// PostURL is the address of a page post whose permalink is not given:
// its id is "{page id}_{post id}".
func PostURL(id string) string {
	if pageID, postID, ok := strings.Cut(id, "_"); ok {
		return "https://www.facebook.com/" + pageID + "/posts/" + postID
	}
	return "https://www.facebook.com/" + id
}

// EventURL is an event's address.
func EventURL(id string) string { return "https://www.facebook.com/events/" + id + "/" }
