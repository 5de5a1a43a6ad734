package shape

import "github.com/feedsvc/feedsvc/domain"

// The legacy (v0) data of platform posts (api.md 2.5, with the real
// spellings of D1). The <platform>ContentId is the item's newsPageId (as
// sitePageId is for pages); the other ids are the platform's own: the
// post's, the account's.

// legacyPost is what a post's legacy data is made from.
type legacyPost struct {
	item  News
	block domain.SourceBlock
	ids   domain.PlatformIDs
}

// legacyPostData renders the data of each platform's posts, by block type.
var legacyPostData = map[string]func(legacyPost) any{
	string(domain.SourceInstagram): legacyInstagram,
	string(domain.SourceTikTok):    legacyTikTok,
	string(domain.SourceTwitter):   legacyTwitter,
	string(domain.SourceFacebook):  legacyFacebook,
}

func (p legacyPost) contentID() string { return p.item.NewsPageID.String() }

func (p legacyPost) publishedAt() *string {
	if p.item.PublishedAt == nil {
		return nil
	}
	t := Timestamp(*p.item.PublishedAt)
	return &t
}

func (p legacyPost) publisher() domain.Publisher {
	if p.block.Publisher == nil {
		return domain.Publisher{}
	}
	return *p.block.Publisher
}

type legacyInstagramData struct {
	InstagramContentID string                 `json:"instagramContentId"`
	Code               string                 `json:"code"`
	Type               string                 `json:"type"`
	PermalinkURL       string                 `json:"permalinkUrl"`
	Caption            *string                `json:"caption"`
	MediaURL           *string                `json:"mediaUrl"`
	ThumbnailURL       *string                `json:"thumbnailUrl"`
	PublishedAt        *string                `json:"publishedAt"`
	Account            legacyInstagramAccount `json:"account"`
}

type legacyInstagramAccount struct {
	ID            string  `json:"id"`
	Username      string  `json:"username"`
	FullName      *string `json:"fullName"`
	ProfilePicURL *string `json:"profilePicUrl"`
}

func legacyInstagram(p legacyPost) any {
	pub := p.publisher()
	return legacyInstagramData{
		InstagramContentID: p.contentID(), Code: p.ids.Code, Type: p.block.Subtype, PermalinkURL: p.block.PermalinkURL,
		Caption: nullable(p.block.Caption), MediaURL: nullable(p.block.MediaURL), ThumbnailURL: nullable(p.block.ThumbnailURL),
		PublishedAt: p.publishedAt(),
		Account: legacyInstagramAccount{
			ID: p.ids.AccountID, Username: pub.Username, FullName: nullable(p.ids.AccountName), ProfilePicURL: nullable(pub.AvatarURL),
		},
	}
}

type legacyTikTokData struct {
	TikTokContentID string              `json:"tiktokContentId"`
	TikTokID        string              `json:"tiktokId"`
	Type            string              `json:"type"`
	PermalinkURL    string              `json:"permalinkUrl"`
	Caption         *string             `json:"caption"`
	MediaURL        *string             `json:"mediaUrl"`
	ThumbnailURL    *string             `json:"thumbnailUrl"`
	PublishedAt     *string             `json:"publishedAt"`
	Account         legacyTikTokAccount `json:"account"`
}

type legacyTikTokAccount struct {
	ID            string  `json:"id"`
	Username      string  `json:"username"`
	DisplayName   *string `json:"displayName"`
	ProfilePicURL *string `json:"profilePicUrl"`
}

func legacyTikTok(p legacyPost) any {
	pub := p.publisher()
	return legacyTikTokData{
		TikTokContentID: p.contentID(), TikTokID: p.ids.PostID, Type: p.block.Subtype, PermalinkURL: p.block.PermalinkURL,
		Caption: nullable(p.block.Caption), MediaURL: nullable(p.block.MediaURL), ThumbnailURL: nullable(p.block.ThumbnailURL),
		PublishedAt: p.publishedAt(),
		Account: legacyTikTokAccount{
			ID: p.ids.AccountID, Username: pub.Username, DisplayName: nullable(p.ids.AccountName), ProfilePicURL: nullable(pub.AvatarURL),
		},
	}
}

type legacyTwitterData struct {
	TwitterContentID string               `json:"twitterContentId"`
	TwitterItemID    string               `json:"twitterItemId"`
	Type             string               `json:"type"`
	PermalinkURL     string               `json:"permalinkUrl"`
	Text             *string              `json:"text"`
	MediaURL         *string              `json:"mediaUrl"`
	PublishedAt      *string              `json:"publishedAt"`
	Account          legacyTwitterAccount `json:"account"`
}

type legacyTwitterAccount struct {
	ID              string  `json:"id"`
	Username        string  `json:"username"`
	DisplayName     *string `json:"displayName"`
	ProfileImageURL *string `json:"profileImageUrl"`
}

func legacyTwitter(p legacyPost) any {
	pub := p.publisher()
	return legacyTwitterData{
		TwitterContentID: p.contentID(), TwitterItemID: p.ids.PostID, Type: p.block.Subtype, PermalinkURL: p.block.PermalinkURL,
		Text: nullable(p.block.Text), MediaURL: nullable(p.block.MediaURL), PublishedAt: p.publishedAt(),
		Account: legacyTwitterAccount{
			ID: p.ids.AccountID, Username: pub.Username, DisplayName: nullable(p.ids.AccountName), ProfileImageURL: nullable(pub.AvatarURL),
		},
	}
}

type legacyFacebookData struct {
	FacebookContentID string               `json:"facebookContentId"`
	FacebookID        string               `json:"facebookId"`
	Type              string               `json:"type"`
	PermalinkURL      *string              `json:"permalinkUrl"`
	Text              *string              `json:"text"`
	MediaURL          *string              `json:"mediaUrl"`
	PublishedAt       *string              `json:"publishedAt"`
	Source            legacyFacebookSource `json:"source"`
}

type legacyFacebookSource struct {
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	Username *string `json:"username"`
}

func legacyFacebook(p legacyPost) any {
	pub := p.publisher()
	return legacyFacebookData{
		FacebookContentID: p.contentID(), FacebookID: p.ids.PostID, Type: p.block.Subtype, PermalinkURL: nullable(p.block.PermalinkURL),
		Text: nullable(p.block.Text), MediaURL: nullable(p.block.MediaURL), PublishedAt: p.publishedAt(),
		Source: legacyFacebookSource{ID: p.ids.AccountID, Name: pub.Name, Username: nullable(pub.Username)},
	}
}
