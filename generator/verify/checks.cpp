// The list of every check spindle-verify runs. Adding a check: write
// <name>_check.cpp with a makeXxxCheck() factory and add one line here.
#include "check.h"

namespace spindle::verify {

std::unique_ptr<Check> makeKernelExternCCheck(Reporter&);
std::unique_ptr<Check> makeLaunchBoundsCheck(Reporter&);
std::unique_ptr<Check> makeShadowCheck(Reporter&);
std::unique_ptr<Check> makeUnusedParamCheck(Reporter&);
std::unique_ptr<Check> makeConstPointerCheck(Reporter&);
std::unique_ptr<Check> makeSharedScopeCheck(Reporter&);

std::vector<std::unique_ptr<Check>> makeAllChecks(Reporter& reporter) {
  std::vector<std::unique_ptr<Check>> checks;
  checks.push_back(makeKernelExternCCheck(reporter));
  checks.push_back(makeLaunchBoundsCheck(reporter));
  checks.push_back(makeShadowCheck(reporter));
  checks.push_back(makeUnusedParamCheck(reporter));
  checks.push_back(makeConstPointerCheck(reporter));
  checks.push_back(makeSharedScopeCheck(reporter));
  return checks;
}

}  // namespace spindle::verify
