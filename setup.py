# pip install --no-build-isolation .   builds tinygrad._core through the project's CMake and installs the tinygrad
# package (distribution tinygrad-cpp). The CMake build folder is build-pip/ in the checkout (kept, so a reinstall only
# rebuilds what changed), or $TG_CMAKE_BUILD_DIR; $CMAKE_BUILD_PARALLEL_LEVEL bounds the compile jobs.
import os, pathlib, shutil, subprocess, sys
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

class CMakeExtension(Extension):
  def __init__(self, name: str): super().__init__(name, sources=[])

class CMakeBuild(build_ext):
  def build_extension(self, ext: Extension):
    src = pathlib.Path(__file__).parent.resolve()
    given = os.environ.get("TG_CMAKE_BUILD_DIR")
    build = pathlib.Path(given or src / "build-pip").resolve()
    # our own folder builds only what the module needs; a given one (a developer's build) keeps its other settings
    only_module = [] if given else ["-DCMAKE_BUILD_TYPE=Release", "-DTG_BUILD_TESTS=OFF", "-DTG_BUILD_PROGRAMS=OFF"]
    subprocess.check_call(["cmake", "-S", str(src), "-B", str(build), *only_module, "-DTG_BUILD_PYTHON=ON",
                           f"-DTG_PYTHON_EXECUTABLE={sys.executable}"])
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
    subprocess.check_call(["cmake", "--build", str(build), "--target", "tg_python_core", "-j", jobs])
    built = sorted((build / "python" / "tinygrad").glob("_core*.so"))
    if not built: raise RuntimeError(f"the CMake build made no tinygrad/_core*.so under {build}")
    dest = pathlib.Path(self.get_ext_fullpath(ext.name))
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(built[0], dest)

setup(ext_modules=[CMakeExtension("tinygrad._core")], cmdclass={"build_ext": CMakeBuild})
