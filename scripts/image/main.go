// Command image builds openrecall's OCI image from the static release
// binaries of make dist, without a container daemon: an image index with a
// linux/amd64 and a linux/arm64 image, written as an OCI image layout packed
// in one tar file (what `podman load`, `docker load`, `skopeo copy
// oci-archive:` and `crane push` read).
//
// Each image has two layers and nothing else:
//
//   - the base, the same bytes for both architectures: the host's CA bundle
//     (/etc/ssl/certs/ca-certificates.crt, Debian's ca-certificates), its
//     time zone data (/usr/share/zoneinfo, Debian's tzdata, less the
//     localtime link, which names the host's own zone), an empty /tmp
//     (mode 1777) and the state directory /var/lib/openrecall, owned by the
//     image's user;
//   - the static binary, /usr/local/bin/openrecall.
//
// No shell, no libc, no passwd file: the binary is static and runs as the
// numeric user 65532:65532. The build is deterministic: entries sorted,
// every mtime and the config's creation time SOURCE_DATE_EPOCH (the last
// commit's time), owners numeric, gzip at its default level, so two builds
// from the same binaries and host files are the same bytes and digests.
//
// Usage (make image runs it):
//
//	go -C scripts/image run . -dist ../../dist -version V -revision R -epoch N -o ../../dist/openrecall-V-oci.tar
//
// It lives in a module of its own (scripts/image/go.mod) so that
// go-containerregistry and what it requires stay out of the product's
// go.mod; so does composecheck, which loads deploy/compose with compose-go.
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's fixed parts; tests/dist checks each.
const (
	uid, gid   = 65532, 65532
	binPath    = "usr/local/bin/openrecall"
	caPath     = "etc/ssl/certs/ca-certificates.crt"
	zonePath   = "usr/share/zoneinfo"
	stateDir   = "var/lib/openrecall"
	port       = "9555/tcp"
	sourceRepo = "https://github.com/openrecall/openrecall"
)

// arches are the platforms of the index, in its order.
var arches = []struct{ arch, variant string }{
	{"amd64", ""},
	{"arm64", "v8"},
}

func main() {
	var o options
	flag.StringVar(&o.dist, "dist", "dist", "directory holding make dist's openrecall-VERSION-linux-ARCH binaries")
	flag.StringVar(&o.version, "version", "", "the release version (the binaries' names and the image's label)")
	flag.StringVar(&o.revision, "revision", "", "the source revision (the org.opencontainers.image.revision label)")
	flag.Int64Var(&o.epoch, "epoch", 0, "SOURCE_DATE_EPOCH: every mtime and the creation time, in Unix seconds")
	flag.StringVar(&o.ca, "ca", "/etc/ssl/certs/ca-certificates.crt", "the CA bundle to ship")
	flag.StringVar(&o.zoneinfo, "zoneinfo", "/usr/share/zoneinfo", "the time zone database to ship")
	flag.StringVar(&o.out, "o", "", "the OCI archive to write")
	flag.Parse()
	if err := build(o); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// options are the builder's flags.
type options struct {
	dist, version, revision string
	epoch                   int64
	ca, zoneinfo, out       string
}

func build(o options) error {
	if o.version == "" || o.out == "" {
		return errors.New("-version and -o are required")
	}
	if o.epoch <= 0 {
		return fmt.Errorf("-epoch %d: give SOURCE_DATE_EPOCH, a positive Unix time", o.epoch)
	}
	mtime := time.Unix(o.epoch, 0).UTC()

	baseTar, err := baseLayer(o, mtime)
	if err != nil {
		return err
	}
	base, err := layer(baseTar)
	if err != nil {
		return err
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, a := range arches {
		bin, err := os.ReadFile(filepath.Join(o.dist, "openrecall-"+o.version+"-linux-"+a.arch))
		if err != nil {
			return fmt.Errorf("the %s binary (run make dist first): %w", a.arch, err)
		}
		img, err := image(o, mtime, a.arch, a.variant, base, bin)
		if err != nil {
			return fmt.Errorf("%s: %w", a.arch, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add: img,
			Descriptor: v1.Descriptor{
				Platform: &v1.Platform{OS: "linux", Architecture: a.arch, Variant: a.variant},
			},
		})
	}
	return writeArchive(o, mtime, idx)
}

// image is one platform's image: config, base layer, binary layer.
func image(o options, mtime time.Time, arch, variant string, base v1.Layer, bin []byte) (v1.Image, error) {
	var b tarBuilder
	b.dir("usr/", 0o755, 0, mtime)
	b.dir("usr/local/", 0o755, 0, mtime)
	b.dir("usr/local/bin/", 0o755, 0, mtime)
	b.file(binPath, 0o755, bin, mtime)
	binLayer, err := layer(b.bytes())
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: mtime}
	cfg := &v1.ConfigFile{
		Architecture: arch,
		Variant:      variant,
		OS:           "linux",
		Created:      created,
		Config: v1.Config{
			User:         fmt.Sprintf("%d:%d", uid, gid),
			Entrypoint:   []string{"/" + binPath},
			Cmd:          []string{"serve", "--listen", "0.0.0.0:9555"},
			WorkingDir:   "/" + stateDir,
			ExposedPorts: map[string]struct{}{port: {}},
			Volumes:      map[string]struct{}{"/" + stateDir: {}},
			Env: []string{
				"PATH=/usr/local/bin",
				"OPENRECALL_DB=/" + stateDir + "/memory.db",
				"OPENRECALL_AUDIT_KEY_FILE=/" + stateDir + "/audit.key",
			},
			Labels: map[string]string{
				"org.opencontainers.image.title":         "openrecall",
				"org.opencontainers.image.description":   "Alert triage that remembers what analysts decided (openrecall serve)",
				"org.opencontainers.image.version":       o.version,
				"org.opencontainers.image.revision":      o.revision,
				"org.opencontainers.image.created":       mtime.Format(time.RFC3339),
				"org.opencontainers.image.source":        sourceRepo,
				"org.opencontainers.image.documentation": sourceRepo + "/blob/main/docs/reference.md#run-as-a-service",
			},
			StopSignal: "SIGTERM",
		},
		RootFS: v1.RootFS{Type: "layers"},
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, err
	}
	return mutate.Append(img,
		mutate.Addendum{Layer: base, History: v1.History{Created: created, CreatedBy: "openrecall scripts/image: CA certificates, time zone data, /tmp, /" + stateDir}},
		mutate.Addendum{Layer: binLayer, History: v1.History{Created: created, CreatedBy: "openrecall scripts/image: /" + binPath + " (make dist, linux/" + arch + ")"}},
	)
}

// baseLayer is the tar of the architecture-independent files.
func baseLayer(o options, mtime time.Time) ([]byte, error) {
	var b tarBuilder
	ca, err := os.ReadFile(o.ca)
	if err != nil {
		return nil, fmt.Errorf("the CA bundle (apt-get install ca-certificates): %w", err)
	}
	b.dir("etc/", 0o755, 0, mtime)
	b.dir("etc/ssl/", 0o755, 0, mtime)
	b.dir("etc/ssl/certs/", 0o755, 0, mtime)
	b.file(caPath, 0o644, ca, mtime)
	b.dir("tmp/", 0o1777, 0, mtime)
	b.dir("usr/", 0o755, 0, mtime)
	b.dir("usr/share/", 0o755, 0, mtime)
	if err := b.tree(o.zoneinfo, zonePath, mtime); err != nil {
		return nil, fmt.Errorf("the time zone data (apt-get install tzdata): %w", err)
	}
	b.dir("var/", 0o755, 0, mtime)
	b.dir("var/lib/", 0o755, 0, mtime)
	b.dir(stateDir+"/", 0o700, uid, mtime)
	data := b.bytes()
	return data, b.err
}

// layer is an OCI gzip layer of an uncompressed tar.
func layer(data []byte) (v1.Layer, error) {
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
}

// writeArchive writes the index as an OCI layout in a temporary directory,
// named VERSION (the ref name skopeo and crane use) and openrecall:VERSION
// and openrecall:latest (the names docker load gives it), and packs the
// layout into o.out.
func writeArchive(o options, mtime time.Time, idx v1.ImageIndex) error {
	tmp, err := os.MkdirTemp("", "openrecall-image-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }() // scratch: the archive is the result
	p, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return err
	}
	for _, name := range []string{"openrecall:" + o.version, "openrecall:latest"} {
		err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
			"org.opencontainers.image.ref.name": strings.TrimPrefix(name, "openrecall:"),
			"io.containerd.image.name":          "docker.io/library/" + name,
		}))
		if err != nil {
			return err
		}
	}
	var b tarBuilder
	if err := b.tree(tmp, "", mtime); err != nil {
		return err
	}
	data := b.bytes()
	if b.err != nil {
		return b.err
	}
	partial := o.out + ".partial"
	if err := os.WriteFile(partial, data, 0o644); err != nil {
		return err
	}
	return os.Rename(partial, o.out)
}

// tarBuilder writes a tar with fixed owners and mtimes; the first error
// sticks.
type tarBuilder struct {
	buf bytes.Buffer
	tw  *tar.Writer
	err error
}

func (b *tarBuilder) write(h *tar.Header, data []byte) {
	if b.err != nil {
		return
	}
	if b.tw == nil {
		b.tw = tar.NewWriter(&b.buf)
	}
	h.Format = tar.FormatPAX
	h.Uname, h.Gname = "", ""
	if b.err = b.tw.WriteHeader(h); b.err == nil && len(data) > 0 {
		_, b.err = b.tw.Write(data)
	}
}

func (b *tarBuilder) dir(name string, mode int64, owner int, mtime time.Time) {
	b.write(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode, Uid: owner, Gid: owner, ModTime: mtime}, nil)
}

func (b *tarBuilder) file(name string, mode int64, data []byte, mtime time.Time) {
	b.write(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: mtime}, data)
}

// tree adds the directory src under the name dst ("" for the archive's
// root), entries sorted: directories 0755, files 0644, relative symbolic
// links kept. A link out of the tree or an absolute one (other than
// zoneinfo's localtime, the host's own zone, which is left out) is an
// error: it would dangle in the image.
func (b *tarBuilder) tree(src, dst string, mtime time.Time) error {
	var entries []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if rel == "localtime" && d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		entries = append(entries, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(entries)
	for _, rel := range entries {
		name := path.Join(dst, rel)
		if rel == "." {
			if dst == "" {
				continue
			}
			name = dst
		}
		full := filepath.Join(src, filepath.FromSlash(rel))
		info, err := os.Lstat(full)
		if err != nil {
			return err
		}
		switch {
		case info.IsDir():
			b.dir(name+"/", 0o755, 0, mtime)
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if err != nil {
				return err
			}
			if path.IsAbs(target) || !strings.HasPrefix(path.Join(path.Dir(name), target), dst) {
				return fmt.Errorf("%s: link to %s leaves the tree", full, target)
			}
			b.write(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777, ModTime: mtime}, nil)
		case info.Mode().IsRegular():
			data, err := os.ReadFile(full)
			if err != nil {
				return err
			}
			b.file(name, 0o644, data, mtime)
		default:
			return fmt.Errorf("%s: neither a file, a directory nor a link", full)
		}
	}
	return nil
}

func (b *tarBuilder) bytes() []byte {
	if b.tw == nil {
		b.tw = tar.NewWriter(&b.buf)
	}
	if err := b.tw.Close(); err != nil && b.err == nil {
		b.err = err
	}
	return b.buf.Bytes()
}
