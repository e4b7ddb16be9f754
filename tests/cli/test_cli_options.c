/* The option blocks the tools share (cli_options.h): a command line of
 * the fold options parses into the fold options the tools hand libljp,
 * "--vmstate WHERE" takes its word, bad values are usage errors (2), and
 * cli_end_option takes the shared options, calls the tool's help, and
 * refuses what nobody took.  cli_error_in names the input as every tool
 * does ("-" is "<stdin>"). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_options.h"
#include "cli_source.h"

static const struct option opts[] = {CLI_FOLD_OPTIONS, CLI_FLAVOR_OPTION,
                                     CLI_SOURCE_OPTIONS, CLI_HELP_OPTIONS,
                                     {0, 0, 0, 0}};

/* Parses argv as a tool would: the fold and flavor options, then the
 * shared end.  Returns CLI_OPT_CONTINUE or the exit status. */
static int parse(int argc, char **argv, ljp_fold_options *fo,
                 void (*usage)(void)) {
  int c;
  optind = 0; /* a full reset of getopt's state */
  while ((c = getopt_long(argc, argv, "hV", opts, NULL)) != -1) {
    int rc = cli_fold_option(c, optarg, argc, argv, fo);
    if (rc == 0)
      rc = cli_flavor_option(c, optarg, &fo->flavor);
    rc = cli_end_option(rc, c, optarg, usage);
    if (rc != CLI_OPT_CONTINUE)
      return rc;
  }
  return CLI_OPT_CONTINUE;
}

static int helped;
static void count_help(void) { helped++; }

START_TEST(fold_options_parse) {
  char *argv[] = {"t", "--stack=lua", "--vmstate", "leaf", "--addresses",
                  "--weight=live", "--flavor=openresty", "--traces=function",
                  "file.bin", NULL};
  ljp_fold_options fo;
  memset(&fo, 0, sizeof(fo));
  cli_init("t");
  ck_assert_int_eq(cli_traces_given(), 0);
  ck_assert_int_eq(parse(9, argv, &fo, count_help), CLI_OPT_CONTINUE);
  ck_assert_int_eq(fo.view, LJP_VIEW_LUA);
  ck_assert_int_eq(fo.vmstate, LJP_VMSTATE_LEAF);
  ck_assert_int_eq(fo.style, LJP_NAME_ADDRESSES);
  ck_assert_int_eq(fo.weight, LJP_WEIGHT_LIVE);
  ck_assert_int_eq(fo.flavor, LJP_FLAVOR_OPENRESTY);
  ck_assert_int_eq(cli_traces(), LJP_TRACES_FUNCTION);
  ck_assert_int_eq(cli_traces_given(), 1);
  /* "leaf" was the option's word, not an input. */
  ck_assert_int_eq(optind, 8);
  ck_assert_str_eq(argv[optind], "file.bin");
  ck_assert_int_eq(helped, 0);
}
END_TEST

START_TEST(bare_vmstate_is_root) {
  char *argv[] = {"t", "--vmstate", "file.bin", NULL};
  ljp_fold_options fo;
  memset(&fo, 0, sizeof(fo));
  cli_init("t");
  ck_assert_int_eq(parse(3, argv, &fo, count_help), CLI_OPT_CONTINUE);
  ck_assert_int_eq(fo.vmstate, LJP_VMSTATE_ROOT);
  ck_assert_int_eq(optind, 2);
}
END_TEST

START_TEST(bad_values_are_usage_errors) {
  static const char *bad[] = {"--stack=up", "--vmstate=top", "--weight=kg",
                              "--flavor=lua", "--traces=all", "--bogus"};
  cli_init("t");
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char *argv[] = {"t", (char *)bad[i], "file.bin", NULL};
    ljp_fold_options fo;
    memset(&fo, 0, sizeof(fo));
    ck_assert_msg(parse(3, argv, &fo, count_help) == CLI_EXIT_USAGE, "%s",
                  bad[i]);
  }
}
END_TEST

START_TEST(end_option_results) {
  cli_init("t");
  /* A tool's own handler took it, or ended the run. */
  ck_assert_int_eq(cli_end_option(1, 'x', NULL, count_help), CLI_OPT_CONTINUE);
  ck_assert_int_eq(cli_end_option(CLI_EXIT_USAGE, 'x', NULL, count_help),
                   CLI_EXIT_USAGE);
  /* None did: the shared ones, help, and the rest. */
  ck_assert_int_eq(cli_end_option(0, CLI_OPT_NO_SOURCE, NULL, count_help),
                   CLI_OPT_CONTINUE);
  ck_assert_ptr_null(cli_sources());
  ck_assert_int_eq(cli_end_option(0, 'h', NULL, count_help), CLI_EXIT_OK);
  ck_assert_int_eq(helped, 1);
  ck_assert_int_eq(cli_end_option(0, '?', NULL, count_help), CLI_EXIT_USAGE);
  ck_assert_int_eq(cli_end_option(0, CLI_OPT_FLAVOR, "luajit", count_help),
                   CLI_EXIT_USAGE); /* the flavor handler's, not the end's */
}
END_TEST

/* What f writes to stderr, as a string (static storage). */
static const char *stderr_of(void (*f)(void)) {
  static char buf[256];
  FILE *tmp = tmpfile();
  ck_assert_ptr_nonnull(tmp);
  int saved = dup(2);
  fflush(stderr);
  dup2(fileno(tmp), 2);
  f();
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(tmp);
  size_t n = fread(buf, 1, sizeof(buf) - 1, tmp);
  buf[n] = '\0';
  fclose(tmp);
  return buf;
}

static void say_stdin(void) { cli_error_in("-", "offset %d: %s", 12, "bad"); }
static void say_file(void) { cli_error_in("a.bin", "truncated"); }
static void say_none(void) { cli_error_in(NULL, "out of %s", "memory"); }

START_TEST(error_in_names_the_input) {
  cli_init("/usr/bin/ljptool");
  ck_assert_str_eq(stderr_of(say_stdin), "ljptool: <stdin>: offset 12: bad\n");
  ck_assert_str_eq(stderr_of(say_file), "ljptool: a.bin: truncated\n");
  ck_assert_str_eq(stderr_of(say_none), "ljptool: out of memory\n");
}
END_TEST

int main(void) {
  Suite *s = suite_create("cli_options");
  TCase *tc = tcase_create("options");
  tcase_add_test(tc, fold_options_parse);
  tcase_add_test(tc, bare_vmstate_is_root);
  tcase_add_test(tc, bad_values_are_usage_errors);
  tcase_add_test(tc, end_option_results);
  tcase_add_test(tc, error_in_names_the_input);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
