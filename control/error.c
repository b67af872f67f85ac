#include "error.h"

static const char *const mlv_error_text[MLV_E__COUNT] = {
#define MLV_ERR_TEXT(name, text) [MLV_E_##name] = text,
	MLV_ERRORS(MLV_ERR_TEXT)
#undef MLV_ERR_TEXT
};

const char *mlv_strerror(enum mlv_err err)
{
	if ((unsigned)err >= MLV_E__COUNT)
		return "unknown error";
	return mlv_error_text[err];
}
