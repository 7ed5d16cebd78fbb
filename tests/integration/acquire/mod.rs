//! The acquisition library (`collect::acquire`): topic-file settings, then every source
//! against the loopback web, and the `mediawiki` source against a real MediaWiki.

mod config;
mod demo;
mod mediawiki_real;
mod sites;
mod sources;
