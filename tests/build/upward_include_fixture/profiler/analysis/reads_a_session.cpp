// Not compiled: the negative control of build.includes_point_down_the_data_flow.
// An analysis that reads a stored session includes the store, one layer above it.
#include "profiler/store/session_view.h"
