#include "engine/models/model.h"
