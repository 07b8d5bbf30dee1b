package memory

import "syscall"

// freeBytes returns the space of the file system holding dir that an
// unprivileged user may still write, and whether it could be read.
func freeBytes(dir string) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return st.Bavail * uint64(st.Bsize), true
}
