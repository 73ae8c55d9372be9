//! Office checks. (Being written; see issue 2.)
