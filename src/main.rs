fn main() {
    std::process::exit(collect::cli::main());
}
