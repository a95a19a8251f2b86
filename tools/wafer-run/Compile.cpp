//===- Compile.cpp - tfm module to runtime program ------------------------===//
#include "Compile.h"

#include "wafer/Runtime/Target.h"
#include "wafer/Support/ToolSupport.h"
#include "wafer/Target/BundleEmitter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>

using namespace llvm;
using namespace wafer;

/// "file: node 'name'" for locations the importer made, else the file.
static std::string describe(mlir::Location loc) {
  std::string node, file;
  loc->walk([&](mlir::Location inner) {
    if (auto named = dyn_cast<mlir::NameLoc>(inner); named && node.empty())
      node = named.getName().str();
    if (auto fileLoc = dyn_cast<mlir::FileLineColLoc>(inner);
        file.empty() && fileLoc)
      file = fileLoc.getFilename().str();
    return mlir::WalkResult::advance();
  });
  if (!node.empty())
    return file.empty() ? "node '" + node + "'"
                        : file + ": node '" + node + "'";
  return file;
}

bool wafer::planFits(mlir::ModuleOp module, CompileOptions options,
                     bool raised) {
  FreedMemoryKept kept;
  mlir::OwningOpRef<mlir::ModuleOp> copy(module.clone());
  options.lower = false;
  mlir::PassManager pm(module.getContext());
  if (raised)
    buildPlanPipeline(pm, options);
  else
    buildCompilePipeline(pm, options);
  // Diagnostics of the attempt are not the user's errors.
  mlir::ScopedDiagnosticHandler quiet(module.getContext(),
                                      [](mlir::Diagnostic &) {
                                        return mlir::success();
                                      });
  return mlir::succeeded(pm.run(*copy));
}

/// "; the smallest square grid it fits is NxN" for a model that does not
/// fit `options.grid`: doubling from its shorter side, then bisection, up to
/// the fabric's smaller side (assuming the bytes per core do not grow as a
/// square grid grows), or below that side when its square fits.
static std::string smallestSquareGrid(mlir::ModuleOp imported,
                                      CompileOptions options) {
  Expected<rt::Target> target = rt::loadTarget(options.target);
  int64_t height = 0, width = 0;
  auto [h, w] = StringRef(options.grid).split('x');
  if (!target || h.getAsInteger(10, height) || w.getAsInteger(10, width)) {
    consumeError(target.takeError());
    return "";
  }
  // Raise once: the probes differ only in the grid.
  {
    mlir::PassManager pm(imported.getContext());
    buildRaisePipeline(pm, options);
    mlir::ScopedDiagnosticHandler quiet(imported.getContext(),
                                        [](mlir::Diagnostic &) {
                                          return mlir::success();
                                        });
    if (mlir::failed(pm.run(imported)))
      return "";
  }
  auto fitsSquare = [&](int64_t n) {
    options.grid = formatv("{0}x{0}", n).str();
    return planFits(imported, options, /*raised=*/true);
  };
  int64_t limit = std::min(target->fabricHeight, target->fabricWidth);
  int64_t side = std::min({height, width, limit}), fails = 0, fits = 0;
  // A non-square grid can need more bytes per core than a smaller square
  // one (a GEMM's contraction split into lcm(H, W) blocks, mostly padding
  // when that exceeds its size): then the search runs below its shorter
  // side.
  if (height != width && fitsSquare(side))
    fits = side;
  else
    fails = side;
  for (int64_t n = std::min(2 * fails, limit); !fits && n > fails;
       n = std::min(2 * n, limit)) {
    if (fitsSquare(n)) {
      fits = n;
      break;
    }
    fails = n;
  }
  if (!fits)
    return formatv("; it fits no square grid up to {0}x{0} (the fabric of "
                   "target '{1}')",
                   limit, target->name)
        .str();
  while (fits - fails > 1) {
    int64_t mid = (fails + fits) / 2;
    (fitsSquare(mid) ? fits : fails) = mid;
  }
  return formatv("; the smallest square grid it fits is {0}x{0}", fits).str();
}

Expected<rt::Program> wafer::compileModule(mlir::ModuleOp module,
                                           const CompileOptions &options,
                                           bool weights,
                                           uint64_t maxValueBytes) {
  if (options.grid.empty())
    return createStringError(inconvertibleErrorCode(),
                             "--grid HxW is required to compile a model");
  mlir::MLIRContext *context = module.getContext();
  std::optional<FreedMemoryKept> kept(std::in_place);
  std::string firstError;
  mlir::OwningOpRef<mlir::ModuleOp> imported(module.clone());
  {
    mlir::ScopedDiagnosticHandler handler(context, [&](mlir::Diagnostic &d) {
      if (d.getSeverity() == mlir::DiagnosticSeverity::Error &&
          firstError.empty())
        firstError = describe(d.getLocation()) + ": " + d.str();
      return mlir::success();
    });
    mlir::PassManager pm(context);
    buildCompilePipeline(pm, options);
    if (mlir::succeeded(pm.run(module)))
      firstError.clear();
    else if (firstError.empty())
      firstError = "compilation failed";
  }
  if (!firstError.empty()) {
    if (StringRef(firstError).contains("mesh-check-memory: '"))
      firstError += smallestSquareGrid(*imported, options);
    if (StringRef(firstError).starts_with(": "))
      firstError = firstError.substr(2);
    return createStringError(inconvertibleErrorCode(), firstError);
  }
  kept.reset();
  return buildRuntimeProgram(module, weights, maxValueBytes);
}

std::string wafer::formatRate(double perSecond) {
  return perSecond >= 0.1 ? llvm::formatv("{0:f1}", perSecond).str()
                          : llvm::formatv("{0:e2}", perSecond).str();
}
