#include "pipe/Plan/PlanDriver.h"
