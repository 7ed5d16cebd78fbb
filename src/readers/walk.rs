//! The walk of a local source's directory: which files are inputs, and which entries are
//! skipped and why.
//!
//! A hand walk rather than the `walkdir` crate: walkdir's loop check compares a directory with
//! its ancestors only and its `follow_links` is all or nothing, while a source needs links inside
//! its root followed, links leaving it refused unless the topic says `follow_links`, a directory
//! or file reached twice read once (under its own path, not a link's), and every refusal named
//! with one of the closed set of [`SkipReason`]s. That bookkeeping is the bulk of the code either
//! way, so the dependency would buy little.
//!
//! Nothing here opens a file: entries are judged from their metadata (`lstat`, and `stat` of a
//! link's target), so a FIFO, socket or device named like a text is skipped before anything
//! could block on it or read it forever.

use super::{Skip, SkipReason};
use anyhow::{Context, Result};
use std::collections::HashSet;
use std::fs::{self, FileType, Metadata};
use std::path::{Path, PathBuf};

/// What the walk takes in.
#[derive(Debug, Clone, Copy)]
pub struct WalkOptions<'a> {
    /// File-name endings of inputs (lower case, with the dot: `.txt`, `.html.gz`).
    pub exts: &'a [&'a str],
    /// Follow symbolic links whose target lies outside the root.
    pub follow_links: bool,
}

/// What the walk found: the input files and the skipped entries, each sorted by path so that
/// runs are repeatable.
#[derive(Debug, Default)]
pub struct Walk {
    /// Regular files to read, every one under the root (through the links that were followed).
    pub files: Vec<PathBuf>,
    /// Entries not read, with why.
    pub skipped: Vec<Skip>,
}

/// A file or directory's identity: device and inode, which every path to it shares.
type Identity = (u64, u64);

#[cfg(unix)]
fn identity(meta: &Metadata) -> Identity {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn identity(_meta: &Metadata) -> Identity {
    // Without inodes every entry is its own identity: loops are then caught only by the
    // canonical-path check of links, which is what non-Unix systems get.
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    (u64::MAX, NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Whether `name` ends with one of `exts`, ignoring case.
pub fn has_ext(path: &Path, exts: &[&str]) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .map(|n| {
            let lower = n.to_ascii_lowercase();
            exts.iter().any(|x| lower.ends_with(x))
        })
        .unwrap_or(false)
}

/// What kind of non-regular file a file type is, for the skip message.
pub fn kind_of(ft: &FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_socket() {
            return "a socket";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
    }
    if ft.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// A directory to list, with the identities of itself and of every directory above it on the
/// path it was reached by (a link to one of those is a loop).
struct Dir {
    path: PathBuf,
    ancestors: Vec<Identity>,
}

/// A symbolic link met while listing, judged once every real directory has been listed, so
/// that what a link repeats is already known and the real path wins.
struct Link {
    path: PathBuf,
    ancestors: Vec<Identity>,
}

struct Walker<'a> {
    opts: WalkOptions<'a>,
    root_canon: PathBuf,
    dirs_seen: HashSet<Identity>,
    files_seen: HashSet<Identity>,
    todo: Vec<Dir>,
    links: Vec<Link>,
    /// Links to regular files, with their target's identity: judged last, once every
    /// directory is listed, so a file reached through a directory is read under that path.
    file_links: Vec<(PathBuf, Identity, PathBuf)>,
    out: Walk,
}

/// Walks the directory `root`: every regular file whose name ends with one of the extensions,
/// and a [`Skip`] for every entry that looks like an input but cannot safely be read. Fails
/// only when the root itself cannot be listed.
pub fn walk(root: &Path, opts: &WalkOptions<'_>) -> Result<Walk> {
    let root_canon =
        fs::canonicalize(root).with_context(|| format!("{}: cannot open", root.display()))?;
    let meta = fs::metadata(root).with_context(|| format!("{}: cannot open", root.display()))?;
    // Listed up front so that an unlistable root fails the source rather than skipping it.
    fs::read_dir(root).with_context(|| format!("{}: cannot list", root.display()))?;
    let id = identity(&meta);
    let mut w = Walker {
        opts: *opts,
        root_canon,
        dirs_seen: HashSet::from([id]),
        files_seen: HashSet::new(),
        todo: vec![Dir {
            path: root.to_path_buf(),
            ancestors: vec![id],
        }],
        links: Vec::new(),
        file_links: Vec::new(),
        out: Walk::default(),
    };
    loop {
        while let Some(dir) = w.todo.pop() {
            w.list(dir);
        }
        if w.links.is_empty() {
            break;
        }
        let mut links = std::mem::take(&mut w.links);
        links.sort_by(|a, b| a.path.cmp(&b.path));
        for link in links {
            w.follow(link);
        }
    }
    let mut file_links = std::mem::take(&mut w.file_links);
    file_links.sort();
    for (path, id, target) in file_links {
        if w.files_seen.insert(id) {
            w.out.files.push(path);
        } else {
            w.skip(
                &path,
                SkipReason::AlreadyRead,
                format!(
                    "link to {}, a file read under another path",
                    target.display()
                ),
            );
        }
    }
    let mut out = w.out;
    out.files.sort();
    out.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

impl Walker<'_> {
    fn skip(&mut self, path: &Path, reason: SkipReason, detail: String) {
        self.out.skipped.push(Skip::file(path, reason, detail));
    }

    fn list(&mut self, dir: Dir) {
        let entries = match fs::read_dir(&dir.path) {
            Ok(e) => e,
            Err(e) => {
                return self.skip(
                    &dir.path,
                    SkipReason::Unreadable,
                    format!("cannot list directory: {e}"),
                )
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    return self.skip(
                        &dir.path,
                        SkipReason::Unreadable,
                        format!("cannot list directory: {e}"),
                    )
                }
            };
            let path = entry.path();
            // Metadata of the entry itself, never of a link's target.
            let meta = match fs::symlink_metadata(&path) {
                Ok(m) => m,
                Err(e) => {
                    if has_ext(&path, self.opts.exts) {
                        self.skip(&path, SkipReason::Unreadable, format!("cannot stat: {e}"));
                    }
                    continue;
                }
            };
            let ft = meta.file_type();
            if ft.is_symlink() {
                self.links.push(Link {
                    path,
                    ancestors: dir.ancestors.clone(),
                });
            } else if ft.is_dir() {
                self.enter(path, &meta, &dir.ancestors, None);
            } else if has_ext(&path, self.opts.exts) {
                if ft.is_file() {
                    // Hard links stay separate inputs, as they always were.
                    self.files_seen.insert(identity(&meta));
                    self.out.files.push(path);
                } else {
                    let kind = kind_of(&ft);
                    self.skip(
                        &path,
                        SkipReason::NotRegularFile,
                        format!("{kind}, not read"),
                    );
                }
            }
        }
    }

    /// Queues a directory reached at `path` (through a link when `via` names its target),
    /// unless it was listed before.
    fn enter(
        &mut self,
        path: PathBuf,
        meta: &Metadata,
        ancestors: &[Identity],
        via: Option<&Path>,
    ) {
        let id = identity(meta);
        let target = via.map(|t| format!("link to {}", t.display()));
        if ancestors.contains(&id) {
            let what = target.unwrap_or_else(|| "directory".into());
            return self.skip(
                &path,
                SkipReason::Loop,
                format!("{what}, which holds this entry: following it would never end"),
            );
        }
        if !self.dirs_seen.insert(id) {
            let what = target.unwrap_or_else(|| "directory".into());
            return self.skip(
                &path,
                SkipReason::AlreadyRead,
                format!("{what}, a directory read under another path"),
            );
        }
        let mut ancestors = ancestors.to_vec();
        ancestors.push(id);
        self.todo.push(Dir { path, ancestors });
    }

    fn follow(&mut self, link: Link) {
        let path = link.path;
        let named_input = has_ext(&path, self.opts.exts);
        let shown = fs::read_link(&path)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "?".into());
        let meta = match fs::metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if named_input {
                    self.skip(
                        &path,
                        SkipReason::DanglingLink,
                        format!("link to {shown}, which does not exist"),
                    );
                }
                return;
            }
            Err(e) if is_link_loop(&e) => {
                return self.skip(
                    &path,
                    SkipReason::Loop,
                    format!("link to {shown}: the links point at each other"),
                );
            }
            Err(e) => {
                if named_input {
                    self.skip(
                        &path,
                        SkipReason::Unreadable,
                        format!("link to {shown}: {e}"),
                    );
                }
                return;
            }
        };
        let is_dir = meta.is_dir();
        if !is_dir && !named_input {
            return;
        }
        let target = match fs::canonicalize(&path) {
            Ok(t) => t,
            Err(e) => {
                return self.skip(
                    &path,
                    SkipReason::Unreadable,
                    format!("link to {shown}: {e}"),
                )
            }
        };
        if !self.opts.follow_links && !target.starts_with(&self.root_canon) {
            return self.skip(
                &path,
                SkipReason::LinkOutsideRoot,
                format!(
                    "link to {}, outside the source's folder (the source's `follow_links: true` follows it)",
                    target.display()
                ),
            );
        }
        if is_dir {
            return self.enter(path, &meta, &link.ancestors, Some(&target));
        }
        let ft = meta.file_type();
        if !ft.is_file() {
            let kind = kind_of(&ft);
            return self.skip(
                &path,
                SkipReason::NotRegularFile,
                format!("link to {}, {kind}, not read", target.display()),
            );
        }
        self.file_links.push((path, identity(&meta), target));
    }
}

/// Whether resolving a link failed because links point at each other (ELOOP).
fn is_link_loop(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    const EXTS: &[&str] = &[".txt"];

    fn names(root: &Path, paths: &[PathBuf]) -> Vec<String> {
        paths
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect()
    }

    fn reasons(root: &Path, w: &Walk) -> Vec<(String, &'static str)> {
        w.skipped
            .iter()
            .map(|s| {
                (
                    s.path.strip_prefix(root).unwrap().display().to_string(),
                    s.reason.as_str(),
                )
            })
            .collect()
    }

    fn opts(follow_links: bool) -> WalkOptions<'static> {
        WalkOptions {
            exts: EXTS,
            follow_links,
        }
    }

    #[test]
    fn loops_are_skipped_and_files_read_once() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        fs::create_dir_all(r.join("sub/deep")).unwrap();
        fs::write(r.join("a.txt"), "a").unwrap();
        fs::write(r.join("sub/b.txt"), "b").unwrap();
        fs::write(r.join("sub/deep/c.txt"), "c").unwrap();
        symlink("..", r.join("sub/up")).unwrap();
        symlink(".", r.join("self")).unwrap();
        symlink("../..", r.join("sub/deep/top")).unwrap();
        let w = walk(r, &opts(false)).unwrap();
        assert_eq!(names(r, &w.files), ["a.txt", "sub/b.txt", "sub/deep/c.txt"]);
        assert_eq!(
            reasons(r, &w),
            [
                ("self".into(), "loop"),
                ("sub/deep/top".into(), "loop"),
                ("sub/up".into(), "loop")
            ]
        );
    }

    #[test]
    fn links_inside_the_root_read_their_target_once_under_its_own_path() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        fs::create_dir(r.join("real")).unwrap();
        fs::write(r.join("real/x.txt"), "x").unwrap();
        fs::write(r.join("notes.md"), "md").unwrap();
        symlink("real", r.join("alias")).unwrap();
        symlink("real/x.txt", r.join("b.txt")).unwrap();
        symlink("notes.md", r.join("notes.txt")).unwrap();
        let w = walk(r, &opts(false)).unwrap();
        assert_eq!(names(r, &w.files), ["notes.txt", "real/x.txt"]);
        assert_eq!(
            reasons(r, &w),
            [
                ("alias".into(), "already-read"),
                ("b.txt".into(), "already-read")
            ]
        );
    }

    #[test]
    fn links_leaving_the_root_follow_the_topic() {
        let d = tempfile::tempdir().unwrap();
        let outside = d.path().join("outside");
        let r = d.path().join("root");
        fs::create_dir_all(outside.join("more")).unwrap();
        fs::create_dir(&r).unwrap();
        fs::write(outside.join("o.txt"), "o").unwrap();
        fs::write(outside.join("more/m.txt"), "m").unwrap();
        symlink(&outside, r.join("ext")).unwrap();
        symlink(outside.join("o.txt"), r.join("o.txt")).unwrap();
        // A link out there back into the folder it came from is a loop, even followed.
        symlink(&outside, outside.join("more/again")).unwrap();
        let w = walk(&r, &opts(false)).unwrap();
        assert!(w.files.is_empty());
        assert_eq!(
            reasons(&r, &w),
            [
                ("ext".into(), "link-outside-root"),
                ("o.txt".into(), "link-outside-root")
            ]
        );
        let w = walk(&r, &opts(true)).unwrap();
        assert_eq!(names(&r, &w.files), ["ext/more/m.txt", "ext/o.txt"]);
        assert_eq!(
            reasons(&r, &w),
            [
                ("ext/more/again".into(), "loop"),
                ("o.txt".into(), "already-read")
            ]
        );
    }

    #[test]
    fn special_files_dangling_and_cyclic_links_are_skipped_without_opening() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        let fifo = r.join("pipe.txt");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        symlink("/dev/zero", r.join("zero.txt")).unwrap();
        symlink("missing.txt", r.join("gone.txt")).unwrap();
        symlink("gone-dir", r.join("gone")).unwrap();
        symlink("l2.txt", r.join("l1.txt")).unwrap();
        symlink("l1.txt", r.join("l2.txt")).unwrap();
        fs::write(r.join("ok.txt"), "ok").unwrap();
        let w = walk(r, &opts(false)).unwrap();
        assert_eq!(names(r, &w.files), ["ok.txt"]);
        assert_eq!(
            reasons(r, &w),
            [
                ("gone.txt".into(), "dangling-link"),
                ("l1.txt".into(), "loop"),
                ("l2.txt".into(), "loop"),
                ("pipe.txt".into(), "not-regular-file"),
                ("zero.txt".into(), "link-outside-root"),
            ]
        );
        let w = walk(r, &opts(true)).unwrap();
        let zero = w
            .skipped
            .iter()
            .find(|s| s.path.ends_with("zero.txt"))
            .unwrap();
        assert_eq!(zero.reason, SkipReason::NotRegularFile);
        assert!(zero.detail.contains("character device"), "{}", zero.detail);
    }

    #[test]
    fn an_unlistable_root_is_an_error_naming_it() {
        let d = tempfile::tempdir().unwrap();
        let e = walk(&d.path().join("nope"), &opts(false)).unwrap_err();
        assert!(format!("{e:#}").contains("nope"), "{e:#}");
    }
}
