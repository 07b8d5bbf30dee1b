package dist_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openrecall/openrecall/internal/testenv"
)

// The OCI media types the image must use (image-spec v1.1).
const (
	mtIndex    = "application/vnd.oci.image.index.v1+json"
	mtManifest = "application/vnd.oci.image.manifest.v1+json"
	mtConfig   = "application/vnd.oci.image.config.v1+json"
	mtLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// descriptor is an OCI content descriptor.
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *ociPlatform      `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	// ArtifactType, on a descriptor of an image manifest, is its config's
	// media type (image-spec 1.1, descriptor.md).
	ArtifactType string `json:"artifactType,omitempty"`
}

// ociPlatform is a descriptor's platform.
type ociPlatform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Variant      string `json:"variant,omitempty"`
}

// ociIndex is an image index (and the layout's index.json).
type ociIndex struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []descriptor `json:"manifests"`
}

// ociManifest is an image manifest.
type ociManifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

// ociConfig is an image configuration, every field the image may have:
// decoding is strict, so a field the builder should not write (a
// healthcheck, an onbuild, …) fails the test.
type ociConfig struct {
	Architecture string    `json:"architecture"`
	OS           string    `json:"os"`
	Variant      string    `json:"variant"`
	Created      time.Time `json:"created"`
	Config       struct {
		User         string              `json:"User"`
		ExposedPorts map[string]struct{} `json:"ExposedPorts"`
		Env          []string            `json:"Env"`
		Entrypoint   []string            `json:"Entrypoint"`
		Cmd          []string            `json:"Cmd"`
		Volumes      map[string]struct{} `json:"Volumes"`
		WorkingDir   string              `json:"WorkingDir"`
		Labels       map[string]string   `json:"Labels"`
		StopSignal   string              `json:"StopSignal"`
	} `json:"config"`
	RootFS struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
	History []struct {
		Created   time.Time `json:"created"`
		CreatedBy string    `json:"created_by"`
	} `json:"history"`
}

// The image's user, its state directory and its binary.
const (
	imageUID, imageGID = 65532, 65532
	imageBin           = "usr/local/bin/openrecall"
	imageState         = "var/lib/openrecall"
	imageCA            = "etc/ssl/certs/ca-certificates.crt"
	imageZones         = "usr/share/zoneinfo/"
)

// entry is one file of an image's root file system.
type entry struct {
	typ      byte
	mode     int64
	uid, gid int
	link     string
	data     []byte
}

// TestImage reads make image's OCI archive as a registry or a container
// runtime would, with nothing but the image spec: the layout, the index of
// two platforms, each manifest, config and layer, every blob checked
// against its digest; then the config (entrypoint, command, numeric
// non-root user, port, environment, labels) and the files (the binary of
// make dist, the CA bundle, the time zone data, two directories, nothing
// else); then it runs the amd64 binary from the unpacked root file system.
func TestImage(t *testing.T) {
	archive := os.Getenv("OPENRECALL_IMAGE")
	if archive == "" {
		t.Skip("the image's test runs with make test-dist (OPENRECALL_IMAGE=dist/openrecall-VERSION-oci.tar)")
	}
	dir, version := os.Getenv("OPENRECALL_DIST"), os.Getenv("OPENRECALL_DIST_VERSION")
	if dir == "" || version == "" {
		t.Fatal("OPENRECALL_DIST and OPENRECALL_DIST_VERSION must name make dist's directory and version")
	}
	files := readTar(t, archive, false)
	if st, err := os.Stat(archive); err == nil {
		t.Logf("image archive %s: %d bytes (%.1f MiB)", filepath.Base(archive), st.Size(), float64(st.Size())/(1<<20))
	}
	blob := func(d descriptor, mediaType string) []byte {
		t.Helper()
		if d.MediaType != mediaType {
			t.Fatalf("descriptor %s: media type %q, want %q", d.Digest, d.MediaType, mediaType)
		}
		hexDigest, ok := strings.CutPrefix(d.Digest, "sha256:")
		if !ok {
			t.Fatalf("descriptor digest %q is not sha256", d.Digest)
		}
		e, ok := files["blobs/sha256/"+hexDigest]
		if !ok {
			t.Fatalf("blob %s is not in the layout", d.Digest)
		}
		if sum := sha256.Sum256(e.data); hex.EncodeToString(sum[:]) != hexDigest || int64(len(e.data)) != d.Size {
			t.Fatalf("blob %s: %d bytes with digest %x, the descriptor says %d bytes", d.Digest, len(e.data), sum, d.Size)
		}
		return e.data
	}

	var ociLayout struct {
		Version string `json:"imageLayoutVersion"`
	}
	if decodeStrict(t, "oci-layout", files["oci-layout"].data, &ociLayout); ociLayout.Version != "1.0.0" {
		t.Fatalf("oci-layout: imageLayoutVersion %q, want 1.0.0", ociLayout.Version)
	}
	var top ociIndex
	decodeStrict(t, "index.json", files["index.json"].data, &top)
	var names []string
	for _, d := range top.Manifests {
		if d.Digest != top.Manifests[0].Digest {
			t.Errorf("index.json: descriptors name different images: %s and %s", d.Digest, top.Manifests[0].Digest)
		}
		names = append(names, d.Annotations["org.opencontainers.image.ref.name"]+" "+d.Annotations["io.containerd.image.name"])
	}
	if want := []string{version + " docker.io/library/openrecall:" + version, "latest docker.io/library/openrecall:latest"}; !slices.Equal(names, want) {
		t.Errorf("index.json names the image %q, want %q", names, want)
	}
	t.Logf("image index digest %s", top.Manifests[0].Digest)
	var idx ociIndex
	decodeStrict(t, "the image index", blob(top.Manifests[0], mtIndex), &idx)
	if idx.SchemaVersion != 2 || idx.MediaType != mtIndex {
		t.Errorf("image index: schemaVersion %d, mediaType %q", idx.SchemaVersion, idx.MediaType)
	}
	var platforms []string
	for _, d := range idx.Manifests {
		if d.ArtifactType != "" && d.ArtifactType != mtConfig {
			t.Errorf("image index: %s has artifactType %q: an image's is its config's media type", d.Digest, d.ArtifactType)
		}
		platforms = append(platforms, d.Platform.OS+"/"+d.Platform.Architecture+d.Platform.Variant)
	}
	if want := []string{"linux/amd64", "linux/arm64v8"}; !slices.Equal(platforms, want) {
		t.Fatalf("image index platforms %q, want %q", platforms, want)
	}

	var baseLayer string // the first layer's digest: the same for both
	for _, d := range idx.Manifests {
		arch := d.Platform.Architecture
		t.Run(arch, func(t *testing.T) {
			var m ociManifest
			decodeStrict(t, arch+" manifest", blob(d, mtManifest), &m)
			var cfg ociConfig
			decodeStrict(t, arch+" config", blob(m.Config, mtConfig), &cfg)
			checkConfig(t, cfg, arch, d.Platform.Variant, version)
			if len(m.Layers) != 2 || len(cfg.RootFS.DiffIDs) != 2 || len(cfg.History) != 2 {
				t.Fatalf("%d layers, %d diff_ids, %d history entries; want 2 of each (base, binary)", len(m.Layers), len(cfg.RootFS.DiffIDs), len(cfg.History))
			}
			if baseLayer == "" {
				baseLayer = m.Layers[0].Digest
			} else if m.Layers[0].Digest != baseLayer {
				t.Errorf("the base layer differs between the platforms: %s and %s", baseLayer, m.Layers[0].Digest)
			}
			size := m.Config.Size + d.Size
			root := map[string]entry{}
			for i, l := range m.Layers {
				gz := blob(l, mtLayer)
				size += l.Size
				r, err := gzip.NewReader(bytes.NewReader(gz))
				if err != nil {
					t.Fatalf("layer %d: %v", i, err)
				}
				raw, err := io.ReadAll(r)
				if err != nil {
					t.Fatalf("layer %d: %v", i, err)
				}
				if sum := sha256.Sum256(raw); "sha256:"+hex.EncodeToString(sum[:]) != cfg.RootFS.DiffIDs[i] {
					t.Errorf("layer %d: uncompressed digest %x, config's diff_id %s", i, sum, cfg.RootFS.DiffIDs[i])
				}
				maps.Copy(root, readTarBytes(t, raw, true))
			}
			t.Logf("linux/%s image: %d bytes compressed (%.1f MiB; manifest, config and %d layers)", arch, size, float64(size)/(1<<20), len(m.Layers))

			bin, err := os.ReadFile(filepath.Join(dir, "openrecall-"+version+"-linux-"+arch))
			if err != nil {
				t.Fatal(err)
			}
			checkFiles(t, root, bin)
			if arch == "amd64" {
				runFromImage(t, root, cfg)
			}
		})
	}
}

// checkConfig checks the image configuration of one platform.
func checkConfig(t *testing.T, cfg ociConfig, arch, variant, version string) {
	t.Helper()
	c := cfg.Config
	if cfg.OS != "linux" || cfg.Architecture != arch || cfg.Variant != variant {
		t.Errorf("config platform %s/%s%s, want linux/%s%s", cfg.OS, cfg.Architecture, cfg.Variant, arch, variant)
	}
	if want := []string{"/" + imageBin}; !slices.Equal(c.Entrypoint, want) {
		t.Errorf("Entrypoint %q, want %q", c.Entrypoint, want)
	}
	if want := []string{"serve", "--listen", "0.0.0.0:9555"}; !slices.Equal(c.Cmd, want) {
		t.Errorf("Cmd %q, want %q", c.Cmd, want)
	}
	// Numeric, so that a runtime needs no passwd file and a policy of
	// runAsNonRoot can see it is not 0.
	uid, gid, ok := strings.Cut(c.User, ":")
	if u, err := strconv.Atoi(uid); !ok || err != nil || u == 0 || u != imageUID {
		t.Errorf("User %q, want the numeric non-root %d:%d", c.User, imageUID, imageGID)
	} else if g, err := strconv.Atoi(gid); err != nil || g != imageGID {
		t.Errorf("User %q, want group %d", c.User, imageGID)
	}
	if got := slices.Sorted(maps.Keys(c.ExposedPorts)); !slices.Equal(got, []string{"9555/tcp"}) {
		t.Errorf("ExposedPorts %q, want 9555/tcp", got)
	}
	if got := slices.Sorted(maps.Keys(c.Volumes)); !slices.Equal(got, []string{"/" + imageState}) || c.WorkingDir != "/"+imageState {
		t.Errorf("Volumes %q, WorkingDir %q: want the state directory /%s", got, c.WorkingDir, imageState)
	}
	wantEnv := []string{"PATH=/usr/local/bin", "OPENRECALL_DB=/" + imageState + "/memory.db", "OPENRECALL_AUDIT_KEY_FILE=/" + imageState + "/audit.key"}
	if !slices.Equal(c.Env, wantEnv) {
		t.Errorf("Env %q, want %q", c.Env, wantEnv)
	}
	if c.StopSignal != "SIGTERM" {
		t.Errorf("StopSignal %q, want SIGTERM (serve drains on it)", c.StopSignal)
	}
	labels := c.Labels
	for k, want := range map[string]string{
		"org.opencontainers.image.title":   "openrecall",
		"org.opencontainers.image.version": version,
		"org.opencontainers.image.source":  "https://github.com/openrecall/openrecall",
		"org.opencontainers.image.created": cfg.Created.UTC().Format(time.RFC3339),
	} {
		if labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, labels[k], want)
		}
	}
	for _, k := range []string{"org.opencontainers.image.description", "org.opencontainers.image.revision", "org.opencontainers.image.documentation"} {
		if labels[k] == "" {
			t.Errorf("label %s is empty", k)
		}
	}
	for k := range labels {
		if !strings.HasPrefix(k, "org.opencontainers.image.") {
			t.Errorf("label %s is not one of the org.opencontainers.image.* annotations", k)
		}
	}
	// The last commit's time (SOURCE_DATE_EPOCH), not the build's.
	if cfg.Created.IsZero() || time.Since(cfg.Created) < 0 {
		t.Errorf("created %v: want the source's date", cfg.Created)
	}
}

// checkFiles checks an image's root file system is the binary, the CA
// bundle, the time zone data, /tmp and the state directory: no shell, no
// libc, nothing else.
func checkFiles(t *testing.T, root map[string]entry, bin []byte) {
	t.Helper()
	dirs := map[string]int64{ // directory → mode
		"etc": 0o755, "etc/ssl": 0o755, "etc/ssl/certs": 0o755, "tmp": 0o1777, "usr": 0o755, "usr/local": 0o755,
		"usr/local/bin": 0o755, "usr/share": 0o755, "usr/share/zoneinfo": 0o755, "var": 0o755, "var/lib": 0o755, imageState: 0o700,
	}
	zones := 0
	for _, name := range slices.Sorted(maps.Keys(root)) {
		e := root[name]
		switch {
		case name == imageBin:
			if e.typ != tar.TypeReg || e.mode != 0o755 || e.uid != 0 || !bytes.Equal(e.data, bin) {
				t.Errorf("/%s: type %c mode %o uid %d, %d bytes: want root's 0755 file of make dist's binary (%d bytes)", name, e.typ, e.mode, e.uid, len(e.data), len(bin))
			}
		case name == imageCA:
			pool := x509.NewCertPool()
			if e.typ != tar.TypeReg || e.mode != 0o644 || !pool.AppendCertsFromPEM(e.data) {
				t.Errorf("/%s: type %c mode %o: want a 0644 PEM bundle of certificates", name, e.typ, e.mode)
			}
			if n := bytes.Count(e.data, []byte("-----BEGIN CERTIFICATE-----")); n < 50 {
				t.Errorf("/%s holds %d certificates: want the system's bundle", name, n)
			}
		case strings.HasPrefix(name, imageZones):
			zones++
			switch e.typ {
			case tar.TypeDir, tar.TypeReg:
			case tar.TypeSymlink:
				if target := path.Join(path.Dir(name), e.link); path.IsAbs(e.link) || !strings.HasPrefix(target, imageZones) || root[target].typ == 0 {
					t.Errorf("/%s: a link to %s, which the image does not hold", name, e.link)
				}
			default:
				t.Errorf("/%s: type %c in the time zone data", name, e.typ)
			}
		default:
			mode, ok := dirs[name]
			if !ok {
				t.Errorf("/%s: the image holds it; want only the binary, the CA bundle, the time zone data and their directories", name)
				continue
			}
			owner := 0
			if name == imageState {
				owner = imageUID
			}
			if e.typ != tar.TypeDir || e.mode != mode || e.uid != owner {
				t.Errorf("/%s: type %c mode %o uid %d, want a directory of mode %o owned by %d", name, e.typ, e.mode, e.uid, mode, owner)
			}
			delete(dirs, name)
		}
	}
	if len(dirs) > 0 {
		t.Errorf("the image lacks the directories %q", slices.Sorted(maps.Keys(dirs)))
	}
	for _, zone := range []string{"Europe/Berlin", "America/New_York", "Asia/Kolkata", "UTC"} {
		e := root[imageZones+zone]
		for e.typ == tar.TypeSymlink {
			e = root[path.Join(path.Dir(imageZones+zone), e.link)]
		}
		if _, err := time.LoadLocationFromTZData(zone, e.data); err != nil {
			t.Errorf("/%s%s: %v", imageZones, zone, err)
		}
	}
	t.Logf("%d entries, %d of them time zone data", len(root), zones)
}

// runFromImage unpacks root into a directory and runs the binary there
// under chroot, as the image's user, with the image's environment and
// working directory, as a container runtime would: version, then memory
// seed and analyze on the bundled example. Chroot needs root; otherwise it
// skips loudly (fails under CI=true).
func runFromImage(t *testing.T, root map[string]entry, cfg ociConfig) {
	t.Helper()
	if os.Geteuid() != 0 {
		if testenv.CI() {
			t.Fatal("CI=true and not root: the image's binary must run under chroot from the image's root file system")
		}
		t.Skip("SKIPPED: running the image's binary from its root file system needs chroot (root); run make test-dist as root")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(maps.Keys(root)) {
		e, p := root[name], filepath.Join(dir, filepath.FromSlash(name))
		var err error
		switch e.typ {
		case tar.TypeDir:
			err = os.Mkdir(p, os.FileMode(e.mode&0o777))
		case tar.TypeReg:
			err = os.WriteFile(p, e.data, os.FileMode(e.mode&0o777))
		case tar.TypeSymlink:
			err = os.Symlink(e.link, p)
		}
		if err == nil && e.typ != tar.TypeSymlink {
			// Sticky bit (of /tmp) and owner as the layer says.
			err = os.Chmod(p, os.FileMode(e.mode&0o777)|fileModeBits(e.mode))
		}
		if err == nil {
			err = os.Lchown(p, e.uid, e.gid)
		}
		if err != nil {
			t.Fatalf("unpacking /%s: %v", name, err)
		}
	}
	queueData, err := os.ReadFile(queue)
	if err != nil {
		t.Fatal(err)
	}
	// The example goes where any user may write, as a bind mount would.
	if err := os.WriteFile(filepath.Join(dir, "tmp", "queue.jsonl"), queueData, 0o644); err != nil {
		t.Fatal(err)
	}
	uid, gid, _ := strings.Cut(cfg.Config.User, ":")
	u, _ := strconv.Atoi(uid)
	g, _ := strconv.Atoi(gid)
	// The entrypoint is resolved inside the chroot.
	b := binary{prefix: cfg.Config.Entrypoint, dir: cfg.Config.WorkingDir, env: cfg.Config.Env,
		attr: &syscall.SysProcAttr{Chroot: dir, Credential: &syscall.Credential{Uid: uint32(u), Gid: uint32(g)}}}
	runIn := func(args ...string) run {
		t.Helper()
		return b.run(t, args...)
	}
	version := cfg.Config.Labels["org.opencontainers.image.version"]
	if r := runIn("version"); r.code != 0 || !strings.HasPrefix(r.stdout, "openrecall "+version+" ") {
		t.Errorf("version in the image: exit %d, stdout %q, want openrecall %s\nstderr: %s", r.code, r.stdout, version, r.stderr)
	}
	// The database is the image's OPENRECALL_DB, in the state directory
	// only the image's user may write.
	if r := runIn("memory", "seed"); r.code != 0 || !strings.HasPrefix(r.stdout, "seeded 43 memories") {
		t.Fatalf("memory seed in the image: exit %d, stdout %q\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r := runIn("analyze", "/tmp/queue.jsonl")
	if r.code != 0 || !slices.Contains(lines(r.stderr), wantSummary) {
		t.Errorf("analyze in the image: exit %d, want 0 and %q\nstderr: %s", r.code, wantSummary, r.stderr)
	}
	st, err := os.Stat(filepath.Join(dir, imageState, "memory.db"))
	if err != nil {
		t.Fatalf("the image's OPENRECALL_DB: %v", err)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); !ok || sys.Uid != imageUID {
		t.Errorf("/%s/memory.db is not owned by the image's user %d", imageState, imageUID)
	}
}

// fileModeBits is the sticky, setuid and setgid bits of a tar mode as Go's.
func fileModeBits(mode int64) os.FileMode {
	var m os.FileMode
	if mode&0o1000 != 0 {
		m |= os.ModeSticky
	}
	if mode&0o2000 != 0 {
		m |= os.ModeSetgid
	}
	if mode&0o4000 != 0 {
		m |= os.ModeSetuid
	}
	return m
}

// decodeStrict decodes JSON, refusing fields the type lacks and trailing
// data.
func decodeStrict(t *testing.T, what string, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, data)
	}
	if dec.More() {
		t.Fatalf("%s: data after the JSON value", what)
	}
}

func readTar(t *testing.T, file string, layer bool) map[string]entry {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("make image writes the archive: %v", err)
	}
	return readTarBytes(t, data, layer)
}

// readTarBytes reads a tar into name → entry, names without a leading
// "./" or "/" and without a trailing "/". A layer (layer true) may hold
// only directories, files and symbolic links, each once, with no path
// leaving the root and no whiteouts.
func readTarBytes(t *testing.T, data []byte, layer bool) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(path.Clean("/"+h.Name), "/"), "/")
		if name == "" || strings.HasPrefix(h.Name, "../") || strings.Contains(h.Name, "/../") {
			t.Fatalf("tar entry %q leaves the root", h.Name)
		}
		if _, dup := out[name]; dup {
			t.Fatalf("tar entry %q appears twice", h.Name)
		}
		if layer && (h.Typeflag != tar.TypeDir && h.Typeflag != tar.TypeReg && h.Typeflag != tar.TypeSymlink || strings.HasPrefix(path.Base(name), ".wh.")) {
			t.Fatalf("layer entry %q of type %c: want directories, files and links only", h.Name, h.Typeflag)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = entry{typ: h.Typeflag, mode: h.Mode, uid: h.Uid, gid: h.Gid, link: h.Linkname, data: body}
	}
	return out
}
