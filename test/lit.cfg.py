# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "wafer"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.wafer_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "make_model.py",
                   "unit", "reference", "inputs", "fuzz"]

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["wafer-opt", "wafer-translate", "wafer-run"], [config.wafer_tools_dir])
# Debian's python sees numpy and onnx; the one first on PATH may not.
config.substitutions.append(("%debian_python", "/usr/bin/python3"))
config.substitutions.append(("%wafer_src", config.wafer_src_root))
config.substitutions.append(("%inputs",
                             os.path.join(config.test_source_root, "inputs")))
config.substitutions.append(("%wafer_bin", config.wafer_tools_dir))
