/* One CSV cell (RFC 4180) that is also safe to open in a spreadsheet: the
 * grades CSV (frontend/api_grades.c) is read by instructors in Excel,
 * LibreOffice or Google Sheets, and its cells hold labels that students
 * chose. Pure; private to frontend/. */
#pragma once

#include <stddef.h>

/* Writes s as one cell into out (cap bytes, NUL-terminated) and returns
 * its length, or (size_t)-1 when it does not fit. The cell is quoted when
 * s holds a comma, a semicolon (the separator of semicolon-locale
 * spreadsheets), a quote, a CR or an LF, or when it begins with a
 * character a spreadsheet takes for the start of a formula (=, +, -, @, a
 * tab, a CR); such a cell is also prefixed, inside its quotes, with a
 * single quote, as OWASP's CSV injection advice says, so that the
 * spreadsheet shows it as text. Quotes inside are doubled. */
size_t fe_csv_cell(const char *s, char *out, size_t cap);
