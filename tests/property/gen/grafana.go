package gen

import (
	"fmt"
	"reflect"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
)

// GrafanaItemKeys are the members of a Grafana alerts[] item that
// Alertmanager's items lack, in Grafana's order, after the members the two
// share (ItemCore).
func GrafanaItemKeys() []string {
	return []string{"silenceURL", "dashboardURL", "panelURL", "values", "valueString", "imageURL"}
}

// GrafanaURLs are the values of Grafana's link members: links as Grafana
// writes them, padded, blank, relative, another scheme, and none.
func GrafanaURLs() []string {
	return []string{
		"https://grafana.example/alerting/silence/new?alertmanager=grafana&matchers=alertname%3DDisk",
		"", "http://grafana.local:3000/d/abc/disk?orgId=1&viewPanel=2", "  https://grafana.example/d/x  ",
		"/d/abc/disk", "javascript:alert(1)", "ftp://grafana.example/x",
	}
}

// GrafanaValues are values of an item's values member, as Grafana writes
// them (the evaluated expressions by name), empty, and one holding null.
func GrafanaValues() []string {
	return []string{`{"B":44.23943737541908,"C":1}`, `{}`, `{"A":null}`, `{"B0":1e400,"B1":-0}`}
}

// GrafanaGroups are the Grafana webhooks around the items (%s is the
// alerts array): a webhook as Grafana writes it (its own fields before
// its alerts: receiver, status, orgId, alerts, …), a resolved one that
// left alerts out, version "1" or a receiver and orgId alone, the version
// as a number, a padded status, pretty-printed, an externalURL that is no
// link, a null orgId, a status no item may have; the keys sorted (a proxy
// that re-encodes it: alerts first, the webhook still firing); and an
// orgId with nothing else of a webhook (a batch of alerts of any shape,
// unless the format is forced).
func GrafanaGroups() []GrafanaGroup {
	return []GrafanaGroup{
		{Before: true, Format: `{"receiver":"openrecall","status":"firing","orgId":1,"alerts":%s,"groupLabels":{},"commonLabels":{"team":"blue"},"commonAnnotations":{},"externalURL":"https://grafana.example/","version":"1","groupKey":"{}:{}","truncatedAlerts":0,"title":"[FIRING:1]  (blue)","state":"alerting","message":"**Firing**"}`},
		{Before: true, Format: `{"receiver":"openrecall","status":"resolved","orgId":1,"alerts":%s,"externalURL":"https://grafana.example/","version":"1","groupKey":"{}:{alertname=\"Disk\"}","truncatedAlerts":3,"title":"[RESOLVED]","state":"ok","message":""}`},
		{Before: true, Format: `{"version":"1","status":"resolved","alerts":%s}`},
		{Before: true, Format: `{"receiver":"openrecall","orgId":1,"alerts":%s}`},
		{Before: true, Format: `{"version":1,"receiver":"openrecall","status":" Resolved ","alerts":%s}`},
		{Before: true, Format: "{\n  \"receiver\": \"openrecall\",\n  \"status\": \"firing\",\n  \"orgId\": 7,\n  \"alerts\": %s,\n  \"externalURL\": \"javascript:alert(1)\",\n  \"version\": \"1\"\n}"},
		{Before: true, Format: `{"orgId":null,"version":"1","status":"firing","alerts":%s,"truncatedAlerts":"2"}`},
		{Before: true, Format: `{"orgId":1,"status":"pending","alerts":%s}`},
		{Format: `{"alerts":%s,"commonAnnotations":{},"commonLabels":{},"externalURL":"https://grafana.example/","groupKey":"{}:{}","groupLabels":{},"message":"","orgId":1,"receiver":"openrecall","state":"alerting","status":"firing","title":"[FIRING:1]","truncatedAlerts":0,"version":"1"}`},
		{Before: true, Batch: true, Format: `{"orgId":1,"alerts":%s}`},
	}
}

// GrafanaGroup is a Grafana webhook around its items.
type GrafanaGroup struct {
	// Before says the fields that tell Grafana's webhook (orgId, version)
	// and its status come before its alerts.
	Before bool
	// Batch says no member tells a webhook from a batch of alerts of any
	// shape (receiver, groupKey, groupLabels, commonLabels, version,
	// status).
	Batch bool
	// Format is the webhook's JSON text, %s its alerts array.
	Format string
}

// GrafanaWebhook is a Grafana webhook: alerts[] items of Alertmanager's
// members (WebhookItems, every value kind), each followed by the Grafana
// members of Own[i] (none when Own has no element i, or a silenceURL in a
// webhook whose keys are sorted), in the webhook GrafanaGroups()[Group].
type GrafanaWebhook struct {
	Items WebhookItems
	Own   []GrafanaItem
	Group int
}

// GrafanaItem are the Grafana members of one item: Field.Key indexes
// GrafanaItemKeys; a fitting value is a URL (GrafanaURLs, by Scalar), the
// values object (GrafanaValues, by Other) or a value string.
type GrafanaItem struct {
	Fields []ItemField
}

// Body returns the webhook as Grafana (or something in front of it) posts
// it.
func (w GrafanaWebhook) Body() string {
	g := GrafanaGroups()[w.Group%len(GrafanaGroups())]
	return w.Items.body(g.Format, func(i int, sp string, tidy bool) []string {
		if !w.OwnFields(i) {
			if g.Before {
				return nil
			}
			// Keys sorted: the item as Grafana writes it, with its own
			// silenceURL, by which the stream tells it is Grafana's.
			return []string{`"silenceURL"` + sp + ":" + sp + `"` + GrafanaURLs()[0] + `"`}
		}
		var out []string
		for _, f := range w.Own[i].Fields {
			key := GrafanaItemKeys()[f.Key%len(GrafanaItemKeys())]
			out = append(out, `"`+key+`"`+sp+":"+sp+grafanaValue(key, f.Value.ItemLeaf, tidy))
		}
		return out
	})
}

// Kind returns the webhook around the items.
func (w GrafanaWebhook) Kind() GrafanaGroup { return GrafanaGroups()[w.Group%len(GrafanaGroups())] }

// OwnFields reports whether item i carries a Grafana member.
func (w GrafanaWebhook) OwnFields(i int) bool { return i < len(w.Own) && len(w.Own[i].Fields) > 0 }

// grafanaValue writes the value of a Grafana member key; tidy keeps it
// of the fitting kind, a string or null.
func grafanaValue(key string, l ItemLeaf, tidy bool) string {
	kind := ItemValueKinds()[l.Kind%len(ItemValueKinds())]
	if tidy && kind != "fitting" && kind != "string" && kind != "null" {
		kind = "fitting"
	}
	if kind != "fitting" {
		return l.json("")
	}
	switch key {
	case "values":
		return GrafanaValues()[l.Other%len(GrafanaValues())]
	case "valueString":
		return `"[ var='B' labels={instance=db-1} value=44.2 ], [ var='C' labels={} value=1 ]"`
	}
	return `"` + encodeText(GrafanaURLs()[l.Scalar%len(GrafanaURLs())], l.Encoding) + `"`
}

// GrafanaWebhookGen generates Grafana webhooks: WebhookItemsGen's items
// (Alertmanager's members of every value kind, escapes, white space),
// most followed by Grafana's own members of every value kind (links as
// Grafana writes them and not, the evaluated values), in each of
// GrafanaGroups. It shrinks toward fewer, simpler items and members.
func GrafanaWebhookGen() gopter.Gen {
	own := gg.Struct(reflect.TypeOf(GrafanaItem{}), map[string]gopter.Gen{
		"Fields": SliceUpTo(len(GrafanaItemKeys()), gg.Struct(reflect.TypeOf(ItemField{}), map[string]gopter.Gen{
			"Key":   Index(len(GrafanaItemKeys()), 0.3),
			"Value": itemValueGen(0.7),
		}), reflect.TypeOf(ItemField{})),
	})
	return gg.Struct(reflect.TypeOf(GrafanaWebhook{}), map[string]gopter.Gen{
		"Items": WebhookItemsGen(),
		"Own":   SliceUpTo(3, own, reflect.TypeOf(GrafanaItem{})),
		"Group": Index(len(GrafanaGroups()), 0.3),
	})
}

// ValidGrafanaWebhook reports whether w is a value GrafanaWebhookGen
// produces.
func ValidGrafanaWebhook(w GrafanaWebhook) error {
	if err := ValidWebhookItems(w.Items); err != nil {
		return err
	}
	if w.Group < 0 || len(w.Own) > 3 {
		return fmt.Errorf("out of range: group %d, %d items' own members", w.Group, len(w.Own))
	}
	for _, it := range w.Own {
		if len(it.Fields) > len(GrafanaItemKeys()) {
			return fmt.Errorf("%d Grafana members, more than %d", len(it.Fields), len(GrafanaItemKeys()))
		}
		for _, f := range it.Fields {
			v := f.Value
			if f.Key < 0 || v.Kind < 0 || v.Scalar < 0 || v.Encoding < 0 || v.Escape < 0 || v.Raw < 0 || v.Other < 0 {
				return fmt.Errorf("negative index in %+v", f)
			}
			if err := indexesIn(v.Text.Atoms, len(TextAtoms()), "atom"); err != nil {
				return err
			}
		}
	}
	return nil
}
