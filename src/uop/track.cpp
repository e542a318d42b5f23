#include "uop/track.h"

namespace tg::uop {

namespace {
thread_local RewriteLog* current = nullptr;
}

TrackRewrites::TrackRewrites(RewriteLog* log) : outer_(current) { current = log; }
TrackRewrites::~TrackRewrites() { current = outer_; }
RewriteLog* rewrite_log() { return current; }

}  // namespace tg::uop
