// tinygrad.cpp: the umbrella header.
#pragma once
#include "tg/dtype.h"
#include "tg/error.h"
