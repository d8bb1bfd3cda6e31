# The runtime of C-level primitives is compiled at install time; generated
# codecs cimport it. Everything else is in setup.cfg.
#
# Building leaves the source tree as it was: Cython's C file, the object
# files, the wheel's staging folders and the egg-info go to a temporary folder
# that is removed when the build ends. (`pip install -e .` still puts the built
# runtime beside its source, where an editable install imports it from; git
# ignores it.)
import atexit
import os
import shlex
import shutil
import tempfile

from Cython.Distutils import build_ext
from setuptools import Extension, setup

scratch = tempfile.mkdtemp(prefix="roastedavro-build-")
atexit.register(shutil.rmtree, scratch, ignore_errors=True)

# -O2, unless the builder's CFLAGS name a level (a packager's choice, or the
# packaging test's quick -O0 build): extra_compile_args come after CFLAGS on
# the compiler's command line, so a -O2 here would override the builder's
level = [] if any(arg.startswith("-O") for arg in shlex.split(os.environ.get("CFLAGS", ""))) else ["-O2"]
args = [*level, "-g0"]

setup(
    ext_modules=[
        Extension("roastedavro._runtime", ["roastedavro/_runtime.pyx"], extra_compile_args=args),
        # tier 0: the interpreter of plain Avro schemas (no compiler needed at run time)
        Extension("roastedavro._tier0", ["roastedavro/_tier0.pyx"], extra_compile_args=args),
        # roastedavro.arrow's reader: records decoded straight into Arrow buffers
        Extension("roastedavro._columns", ["roastedavro/_columns.pyx"], extra_compile_args=args),
        Extension("roastedavro._columnwriter", ["roastedavro/_columnwriter.pyx"], extra_compile_args=args),
        # roastedavro.fastavro's per-call paths
        Extension("roastedavro._dropin", ["roastedavro/_dropin.pyx"], extra_compile_args=args),
    ],
    cmdclass={"build_ext": build_ext},
    options={
        "build": {"build_base": scratch},
        # the C file in build_temp, not beside the .pyx
        "build_ext": {"cython_c_in_temp": True, "cython_directives": {"language_level": 3}},
        "egg_info": {"egg_base": scratch},
    },
)
