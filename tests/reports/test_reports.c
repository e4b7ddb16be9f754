/* Runner of the report tests. */
#include "report_test.h"

#include <stdlib.h>

int main(void)
{
  SRunner *sr = srunner_create(memreport_built_suite());
  srunner_add_suite(sr, memreport_golden_suite());
  srunner_add_suite(sr, sysreport_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
