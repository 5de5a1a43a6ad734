package platformtest

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Facebook is a fake of the Graph API for pages (developers.facebook.com/
// docs/graph-api/reference/page, …/page/feed, …/page/events): GET /{page}
// by id or username, /{page-id}/posts (since, limit, after) and
// /{page-id}/events (time_filter=upcoming), answering only the fields
// asked for (picture{url}, attachments{…}, place, cover expanded as Graph
// does), with error 803 for an unknown alias, 100/33 for an unknown or
// unreadable id, cursor paging, and page rate limits (code 32).
type Facebook struct {
	*httptest.Server
	graphServer
	// PageSize caps a page of posts or events below the limit asked for.
	PageSize int

	mu    sync.Mutex
	pages []*FacebookPage
}

// FacebookPage is a page of the fake.
type FacebookPage struct {
	ID, Name, Username, PictureURL string
	Posts                          []FacebookPost
	Events                         []FacebookEvent
}

// FacebookPost is a page post; its ID is "{page id}_{post id}".
type FacebookPost struct {
	ID, Message, PermalinkURL, FullPicture string
	// AttachmentType is the first attachment's media_type; "" for none.
	AttachmentType string
	Created        time.Time
}

// FacebookEvent is a page event.
type FacebookEvent struct {
	ID, Name, Description, Timezone, TicketURI, CoverURL string
	Start, End                                           time.Time
	// Offset is the UTC offset the times are written with, in seconds.
	Offset               int
	PlaceName            string
	Street, City, Zip    string
	State, Country       string
	Latitude, Longitude  *float64
	IsCanceled, IsOnline bool
	Updated              time.Time
}

// NewFacebook starts the fake; it stops when the test ends.
func NewFacebook(t interface{ Cleanup(func()) }, token string) *Facebook {
	f := &Facebook{graphServer: graphServer{token: token}, PageSize: 100}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// AddPage adds a page.
func (f *Facebook) AddPage(p *FacebookPage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pages = append(f.pages, p)
}

// Change replaces an event of a page (a new date, a cancellation).
func (f *Facebook) Change(pageID string, e FacebookEvent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.pages {
		if p.ID != pageID {
			continue
		}
		i := slices.IndexFunc(p.Events, func(x FacebookEvent) bool { return x.ID == e.ID })
		if i < 0 {
			p.Events = append(p.Events, e)
		} else {
			p.Events[i] = e
		}
	}
}

// Publish adds a post to a page.
func (f *Facebook) Publish(pageID string, post FacebookPost) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.pages {
		if p.ID == pageID {
			p.Posts = append(p.Posts, post)
		}
	}
}

var (
	edgePath  = regexp.MustCompile(`^/([^/]+)/(posts|events)$`)
	nodePath  = regexp.MustCompile(`^/([^/]+)$`)
	numericID = regexp.MustCompile(`^[0-9]+$`)
)

func (f *Facebook) serve(w http.ResponseWriter, r *http.Request) {
	if !f.admit(w, r, "pages") {
		return
	}
	q := r.URL.Query()
	if m := edgePath.FindStringSubmatch(r.URL.Path); m != nil {
		p := f.page(m[1], false)
		if p == nil {
			f.unknown(w, m[1])
			return
		}
		if m[2] == "posts" {
			f.posts(w, p, q)
		} else {
			f.events(w, p, q)
		}
		return
	}
	if m := nodePath.FindStringSubmatch(r.URL.Path); m != nil {
		p := f.page(m[1], true)
		if p == nil {
			f.unknown(w, m[1])
			return
		}
		fields := fieldList(q.Get("fields"))
		if len(fields) == 0 {
			fields = []string{"name", "id"}
		}
		out := map[string]any{}
		for _, fl := range fields {
			switch e := parseEdge(fl); e.name {
			case "picture":
				out["picture"] = map[string]any{"data": map[string]any{"height": 50, "is_silhouette": false, "url": p.PictureURL, "width": 50}}
			default:
				for k, v := range pick(map[string]any{"id": p.ID, "name": p.Name, "username": p.Username,
					"link": "https://www.facebook.com/" + p.Username}, []string{e.name}) {
					out[k] = v
				}
			}
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	graphError(w, http.StatusBadRequest, 2500, 0, "OAuthException", "Unknown path components", nil)
}

func (f *Facebook) page(key string, byUsername bool) *FacebookPage {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.pages {
		if p.ID == key || byUsername && strings.EqualFold(p.Username, key) {
			return p
		}
	}
	return nil
}

func (f *Facebook) unknown(w http.ResponseWriter, key string) {
	if numericID.MatchString(key) {
		graphError(w, http.StatusBadRequest, 100, 33, "GraphMethodException",
			"Unsupported get request. Object with ID '"+key+"' does not exist, cannot be loaded due to missing permissions, or does not support this operation.", nil)
		return
	}
	graphError(w, http.StatusNotFound, 803, 0, "OAuthException", "(#803) Some of the aliases you requested do not exist: "+key, nil)
}

// window is one page of n items from the after cursor, with Graph's
// paging block.
func (f *Facebook) window(n int, q map[string][]string, kind string) (from, to int, paging map[string]any) {
	limit := 25
	if v, err := strconv.Atoi(first(q["limit"])); err == nil && v > 0 {
		limit = min(v, 100)
	}
	limit = min(limit, f.PageSize)
	if c := first(q["after"]); c != "" {
		b, _ := base64.StdEncoding.DecodeString(c)
		from, _ = strconv.Atoi(strings.TrimPrefix(string(b), kind+":"))
	}
	from = min(from, n)
	to = min(from+limit, n)
	cursor := func(i int) string { return base64.StdEncoding.EncodeToString([]byte(kind + ":" + strconv.Itoa(i))) }
	paging = map[string]any{"cursors": map[string]any{"before": cursor(from), "after": cursor(to)}}
	if to < n {
		paging["next"] = f.URL + "/next?access_token=" + f.token + "&after=" + cursor(to)
	}
	return from, to, paging
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

func (f *Facebook) posts(w http.ResponseWriter, p *FacebookPage, q map[string][]string) {
	f.mu.Lock()
	posts := slices.Clone(p.Posts)
	f.mu.Unlock()
	if s := first(q["since"]); s != "" {
		since, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			graphError(w, http.StatusBadRequest, 100, 0, "OAuthException", "(#100) The since parameter is not a valid time", nil)
			return
		}
		posts = slices.DeleteFunc(posts, func(x FacebookPost) bool { return x.Created.Unix() < since })
	}
	slices.SortFunc(posts, func(a, b FacebookPost) int { return b.Created.Compare(a.Created) })
	fields := fieldList(first(q["fields"]))
	from, to, paging := f.window(len(posts), q, "posts")
	data := []any{}
	for _, x := range posts[from:to] {
		obj := map[string]any{}
		for _, fl := range fields {
			e := parseEdge(fl)
			if e.name == "attachments" {
				if x.AttachmentType != "" {
					obj["attachments"] = map[string]any{"data": []any{pick(map[string]any{
						"media_type": x.AttachmentType, "type": x.AttachmentType, "url": x.PermalinkURL,
					}, e.fields)}}
				}
				continue
			}
			for k, v := range pick(map[string]any{
				"id": x.ID, "message": x.Message, "created_time": x.Created.UTC().Format("2006-01-02T15:04:05-0700"),
				"permalink_url": x.PermalinkURL, "full_picture": x.FullPicture,
			}, []string{e.name}) {
				obj[k] = v
			}
		}
		data = append(data, obj)
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "paging": paging})
}

func (f *Facebook) events(w http.ResponseWriter, p *FacebookPage, q map[string][]string) {
	f.mu.Lock()
	events := slices.Clone(p.Events)
	f.mu.Unlock()
	now := time.Now()
	switch first(q["time_filter"]) {
	case "upcoming":
		events = slices.DeleteFunc(events, func(e FacebookEvent) bool { return lastMoment(e).Before(now) })
	case "past":
		events = slices.DeleteFunc(events, func(e FacebookEvent) bool { return !lastMoment(e).Before(now) })
	}
	slices.SortFunc(events, func(a, b FacebookEvent) int { return b.Start.Compare(a.Start) })
	fields := fieldList(first(q["fields"]))
	from, to, paging := f.window(len(events), q, "events")
	data := []any{}
	for _, e := range events[from:to] {
		zone := time.FixedZone("", e.Offset)
		obj := map[string]any{
			"id": e.ID, "name": e.Name, "description": e.Description, "timezone": e.Timezone,
			"start_time": e.Start.In(zone).Format("2006-01-02T15:04:05-0700"), "ticket_uri": e.TicketURI,
			"is_canceled": e.IsCanceled, "is_online": e.IsOnline,
			"updated_time": e.Updated.UTC().Format("2006-01-02T15:04:05-0700"),
		}
		if !e.End.IsZero() {
			obj["end_time"] = e.End.In(zone).Format("2006-01-02T15:04:05-0700")
		}
		if e.PlaceName != "" || e.City != "" {
			loc := pick(map[string]any{"street": e.Street, "city": e.City, "zip": e.Zip, "state": e.State, "country": e.Country},
				[]string{"street", "city", "zip", "state", "country"})
			if e.Latitude != nil {
				loc["latitude"], loc["longitude"] = *e.Latitude, *e.Longitude
			}
			obj["place"] = map[string]any{"name": e.PlaceName, "location": loc, "id": "1093" + e.ID}
		}
		if e.CoverURL != "" {
			obj["cover"] = map[string]any{"source": e.CoverURL, "id": "2093" + e.ID, "offset_x": 0, "offset_y": 50}
		}
		out := map[string]any{}
		for _, fl := range fields {
			name := parseEdge(fl).name
			if v, ok := obj[name]; ok && v != "" && v != nil {
				out[name] = v
			}
		}
		data = append(data, out)
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "paging": paging})
}

func lastMoment(e FacebookEvent) time.Time {
	if !e.End.IsZero() {
		return e.End
	}
	return e.Start
}
