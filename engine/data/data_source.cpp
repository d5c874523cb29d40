#include "engine/data/data_source.h"
