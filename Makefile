# The two commands of the README's quick start. `make demo`: the system packages MuJoCo's off-screen rendering needs
# (with apt-get, as root or with sudo; otherwise it says what to install), a virtual environment in .venv, lapa installed
# into it as the README's Install says, then the whole pipeline (`lapa pipeline`, the embedded demo). `make test`: the
# same set-up, then the test suite (every chapter, three at a time). `make setup` does the set-up alone.
PYTHON ?= python3
VENV ?= .venv
APT_PACKAGES = libegl1 libopengl0 libgl1-mesa-dri libegl-mesa0
export MUJOCO_GL ?= egl

.PHONY: setup system demo test

setup: system $(VENV)/.installed

system:
	@if command -v dpkg >/dev/null; then \
	  if dpkg -s $(APT_PACKAGES) >/dev/null 2>&1; then :; \
	  elif [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq --no-install-recommends $(APT_PACKAGES); \
	  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo apt-get update -qq && sudo apt-get install -y -qq --no-install-recommends $(APT_PACKAGES); \
	  else echo "MuJoCo renders through Mesa's EGL: install $(APT_PACKAGES) as root, then run make again"; exit 1; fi; \
	elif ldconfig -p 2>/dev/null | grep -q libEGL_mesa; then :; \
	else echo "MuJoCo renders through Mesa's EGL: install your distribution's Mesa EGL and OpenGL packages, then run make again"; exit 1; fi

$(VENV)/.installed: setup.py settings.ini
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/pip install -e ".[dev]"
	touch $@

demo: setup
	$(VENV)/bin/lapa pipeline

test: setup
	$(VENV)/bin/pytest -n 3
