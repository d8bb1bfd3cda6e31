# The runtime of C-level primitives is compiled at install time; generated
# codecs cimport it. Everything else is in setup.cfg.
from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    ext_modules=cythonize(
        [Extension("roastedavro._runtime", ["roastedavro/_runtime.pyx"],
                   extra_compile_args=["-O2", "-g0"])],
        compiler_directives={"language_level": 3},
    )
)
