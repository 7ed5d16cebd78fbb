fn main() {
    // A reader that stops early (`collect export … | head`) closes the pipe: end quietly as
    // other Unix filters do, instead of a panic from `println!`. Sockets are unaffected: the
    // standard library sends on them with MSG_NOSIGNAL.
    // SAFETY: called before any thread starts; SIG_DFL is a valid disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    std::process::exit(collect::cli::main());
}
