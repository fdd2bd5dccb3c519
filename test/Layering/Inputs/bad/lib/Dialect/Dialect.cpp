#include "pipe/Dialect/Pipe/IR/PipeOps.h"
