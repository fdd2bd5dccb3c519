#include "pipe/Plan/Planner.h"
