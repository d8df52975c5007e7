# examples/common/example.mk - the build the examples share: plain, or
# PROFILE=1 through stepscope-cc (the one-flag rebuild), objects per mode
# in build/plain/ or build/profile/, ./train a copy of the last mode built.
#
# The including Makefile sets, before including this file:
#   EXAMPLE   its name, for the "built" line (examples/NAME/train)
#   SRC       its sources, all with one extension: EXT (c or cu)
#   TOOL      the compiler command (plain mode); LABEL its log tag (CC, NVCC)
#   XFLAGS    compile and link flags (its CFLAGS or NVCCFLAGS)
# and may add LDLIBS.  CPPFLAGS stays the user's: a command line that sets
# it still finds examples/common, which comes in through EXAMPLE_CPPFLAGS.

STEPSCOPE_CC ?= ../../build/bin/stepscope-cc
PROFILE ?= 0
EXAMPLE_CPPFLAGS := -I../common

ifeq ($(PROFILE),1)
MODE    := profile
COMPILE := $(STEPSCOPE_CC) $(TOOL)
ifneq ($(MAKECMDGOALS),clean)
ifeq ($(shell command -v $(firstword $(STEPSCOPE_CC)) 2>/dev/null),)
$(error stepscope-cc not found at $(STEPSCOPE_CC) (run make at the top of the tree first, or set STEPSCOPE_CC))
endif
endif
else
MODE    := plain
COMPILE := $(TOOL)
# no -I to stepscope.h: the sources include it only where it is found
# (__has_include), and the annotations compile to nothing either way
endif

ifeq ($(V),1)
Q :=
else
Q := @
endif

OBJ := $(patsubst %.$(EXT),build/$(MODE)/%.o,$(SRC))

# Stamps, rewritten only when what they hold changes: build/mode is the
# mode of ./train, build/<mode>/flags the compile command (another
# compiler or other flags rebuild the objects).
FLAGS := $(COMPILE) $(CPPFLAGS) $(EXAMPLE_CPPFLAGS) $(XFLAGS)
ifneq ($(shell cat build/mode 2>/dev/null),$(MODE))
$(shell mkdir -p build && echo '$(MODE)' > build/mode)
endif
ifneq ($(shell cat build/$(MODE)/flags 2>/dev/null),$(strip $(FLAGS)))
$(shell mkdir -p build/$(MODE) && echo '$(strip $(FLAGS))' > build/$(MODE)/flags)
endif

.PHONY: all clean
all: train

train: build/$(MODE)/train build/mode
	$(Q)cp build/$(MODE)/train $@
	@echo "  built   examples/$(EXAMPLE)/train ($(MODE))"

build/$(MODE)/train: $(OBJ) build/$(MODE)/flags
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(COMPILE) $(XFLAGS) $(LDFLAGS) -o $@ $(OBJ) $(LDLIBS)

build/$(MODE)/%.o: %.$(EXT) build/$(MODE)/flags
	@mkdir -p $(dir $@)
	@$(if $(Q),printf '  %-7s %s\n' $(LABEL) $@)
	$(Q)$(COMPILE) $(CPPFLAGS) $(EXAMPLE_CPPFLAGS) $(XFLAGS) -MMD -MP -MF $(@:.o=.d) -c -o $@ $<

-include $(OBJ:.o=.d)

clean:
	rm -rf build train

# For scripts that build the example their own way (tests/bench): its
# sources and include flags on one line, from this directory
.PHONY: print-build
print-build:
	@echo '-I$(abspath ../common) $(SRC)'

