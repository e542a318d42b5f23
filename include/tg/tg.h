// tinygrad.cpp: the umbrella header.
#pragma once
#include "tg/context.h"
#include "tg/counters.h"
#include "tg/device.h"
#include "tg/dim.h"
#include "tg/dtype.h"
#include "tg/error.h"
#include "tg/tensor.h"
#include "tg/nn.h"
#include "tg/optim.h"
#include "tg/state.h"
#include "tg/datasets.h"
#include "tg/jit.h"
