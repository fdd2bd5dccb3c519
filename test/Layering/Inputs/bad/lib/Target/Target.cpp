#include "pipe/Target/CPU/CPUTarget.h"
#include "pipe/Pipelines/Pipelines.h"
#include "pipe/Unknown/Thing.h"
