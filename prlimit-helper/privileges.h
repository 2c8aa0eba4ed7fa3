// The helper's own privileges, with libcap: everything but CAP_SYS_RESOURCE
// goes, before any input beyond argv is read.
#pragma once

#include "core/error.h"

namespace ocirlimit {

// Sets no_new_privs, clears the ambient and inheritable sets, leaves only
// CAP_SYS_RESOURCE (when we had it) in the permitted and effective sets,
// and, when CAP_SETPCAP allows, drops every other capability from the
// bounding set. Any failure is an error: the caller must not go on.
Status DropToSysResource();

}  // namespace ocirlimit
