package cockpit

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed assets
var assetFiles embed.FS

//go:embed templates
var templateFiles embed.FS

// AssetCacheControl is the Cache-Control of every asset: its name changes
// with its content, so a browser may keep it for a year.
const AssetCacheControl = "public, max-age=31536000, immutable"

// asset is one embedded file under its content-hashed name.
type asset struct {
	name        string // "style.3f2a9c1e0b7d.css"
	contentType string
	body        []byte
}

// assetSet maps each embedded asset's plain name ("style.css") to its
// hashed one and serves the hashed names.
type assetSet struct {
	byPlain  map[string]string
	byHashed map[string]asset
}

// loadAssets reads the embedded assets and names each by the SHA-256 of its
// content.
func loadAssets() (assetSet, error) {
	set := assetSet{byPlain: map[string]string{}, byHashed: map[string]asset{}}
	err := fs.WalkDir(assetFiles, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := assetFiles.ReadFile(p)
		if err != nil {
			return err
		}
		plain := strings.TrimPrefix(p, "assets/")
		ext := path.Ext(plain)
		sum := sha256.Sum256(body)
		hashed := strings.TrimSuffix(plain, ext) + "." + hex.EncodeToString(sum[:6]) + ext
		ct := mime.TypeByExtension(ext)
		if ct == "" {
			return fmt.Errorf("asset %s: no content type for %q", plain, ext)
		}
		set.byPlain[plain] = hashed
		set.byHashed[hashed] = asset{name: hashed, contentType: ct, body: body}
		return nil
	})
	return set, err
}

// url returns the address of the asset plainly named name; templates call
// it as {{asset "style.css"}}. An unknown name panics at render, which the
// tests of every page catch.
func (s assetSet) url(prefix, name string) string {
	h, ok := s.byPlain[name]
	if !ok {
		panic("cockpit: no asset " + name)
	}
	return prefix + "assets/" + h
}

// Names returns the hashed names of every asset.
func (s assetSet) names() []string {
	out := make([]string, 0, len(s.byHashed))
	for n := range s.byHashed {
		out = append(out, n)
	}
	return out
}

// serve answers an asset by its hashed name; any other name is 404.
func (s assetSet) serve(w http.ResponseWriter, r *http.Request) {
	a, ok := s.byHashed[r.PathValue("name")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", a.contentType)
	w.Header().Set("Cache-Control", AssetCacheControl)
	w.Header().Set("ETag", `"`+a.name+`"`)
	if strings.TrimPrefix(r.Header.Get("If-None-Match"), "W/") == `"`+a.name+`"` {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	_, _ = w.Write(a.body)
}
